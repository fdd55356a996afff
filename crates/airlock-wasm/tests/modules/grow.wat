;; Grows its memory a page at a time until refused: stopped at the memory cap.
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $more
      (br_if $more (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))))
