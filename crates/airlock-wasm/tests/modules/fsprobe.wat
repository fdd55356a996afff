;; `fsprobe r PATH` prints the file PATH under the first preopened directory (fd 3);
;; `fsprobe w PATH TEXT` creates or truncates it and writes TEXT. Symbolic links are
;; followed. The exit code is the WASI errno of the failing call (0 on success), so a test
;; sees exactly what the guest was told (76 = ENOTCAPABLE).
(module
  (import "wasi_snapshot_preview1" "args_sizes_get"
    (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_get"
    (func $args_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"
    (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  (func $check (param $errno i32)
    (if (local.get $errno) (then (call $proc_exit (local.get $errno)))))

  (func (export "_start")
    (local $mode i32) (local $path i32) (local $fd i32) (local $n i32) (local $write i32)
    (call $check (call $args_sizes_get (i32.const 100) (i32.const 104)))
    ;; argv pointers at 200, strings from 1024
    (call $check (call $args_get (i32.const 200) (i32.const 1024)))
    (local.set $mode (i32.load8_u (i32.load (i32.const 204))))
    (local.set $path (i32.load (i32.const 208)))
    (local.set $write (i32.eq (local.get $mode) (i32.const 119))) ;; 'w'
    (call $check
      (call $path_open
        (i32.const 3) (i32.const 1)
        (local.get $path) (call $strlen (local.get $path))
        ;; oflags: CREAT|TRUNC to write; rights: FD_WRITE or FD_READ
        (select (i32.const 9) (i32.const 0) (local.get $write))
        (select (i64.const 64) (i64.const 2) (local.get $write))
        (i64.const 0) (i32.const 0) (i32.const 300)))
    (local.set $fd (i32.load (i32.const 300)))
    (if (local.get $write)
      (then
        (i32.store (i32.const 400) (i32.load (i32.const 212)))
        (i32.store (i32.const 404) (call $strlen (i32.load (i32.const 212))))
        (call $check (call $fd_write (local.get $fd) (i32.const 400) (i32.const 1) (i32.const 408)))
        (return)))
    (block $done
      (loop $more
        (i32.store (i32.const 400) (i32.const 8192))
        (i32.store (i32.const 404) (i32.const 4096))
        (call $check (call $fd_read (local.get $fd) (i32.const 400) (i32.const 1) (i32.const 408)))
        (local.set $n (i32.load (i32.const 408)))
        (br_if $done (i32.eqz (local.get $n)))
        (i32.store (i32.const 416) (i32.const 8192))
        (i32.store (i32.const 420) (local.get $n))
        (call $check (call $fd_write (i32.const 1) (i32.const 416) (i32.const 1) (i32.const 424)))
        (br $more)))))
