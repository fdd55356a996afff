;; `count N`: adds 1 N times (a compute loop of about 6 instructions per turn), for measuring
;; the interpreter and the cost of fuel metering.
(module
  (func (export "count") (param $n i64) (result i64)
    (local $i i64)
    (block $done
      (loop $next
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $next)))
    (local.get $i)))
