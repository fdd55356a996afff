;; Loops for ever: stopped by fuel or by the wall clock.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
