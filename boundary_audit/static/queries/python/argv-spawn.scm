; BA301 argv-spawn (Python): process APIs that take an argv (classified by the argv's shape).
(call
  function: [
    (attribute attribute: (identifier) @_fn)
    (identifier) @_fn
  ] @sink.process
  arguments: (argument_list) @arg
  (#any-of? @_fn
    "run" "call" "Popen" "check_call" "check_output" "create_subprocess_exec"
    "execv" "execve" "execvp" "execvpe" "execl" "execle" "execlp" "execlpe"
    "spawnv" "spawnve" "spawnvp" "spawnvpe" "spawnl" "spawnle" "spawnlp" "spawnlpe"
    "posix_spawn" "posix_spawnp")) @span

; pty.spawn(argv) and pexpect.run(cmd)
(call
  function: (attribute
    object: (identifier) @_mod
    attribute: (identifier) @_fn) @sink.process
  (#any-of? @_mod "pty" "pexpect")
  (#any-of? @_fn "spawn" "run")) @span
