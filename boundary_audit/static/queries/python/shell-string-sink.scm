; BA101 shell-string-sink (Python): calls that hand a string to a local shell.

; subprocess.run(cmd, shell=True), Popen(..., shell=True), and any spawn API with shell=True
(call
  function: (_) @sink.process
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @_kw
      value: (true)))
  (#eq? @_kw "shell")) @span

; os.system(cmd), os.popen(cmd), subprocess.getoutput(cmd), asyncio.create_subprocess_shell(cmd)
(call
  function: [
    (attribute attribute: (identifier) @_fn)
    (identifier) @_fn
  ] @sink.process
  (#any-of? @_fn "system" "popen" "getoutput" "getstatusoutput" "create_subprocess_shell"
                 "run_process")) @span

; an argv literal whose head is a shell with -c: ["bash", "-lc", cmd]
([(list
    .
    (string) @_sh
    .
    (string) @_flag
    .
    (_) @arg)
  (tuple
    .
    (string) @_sh
    .
    (string) @_flag
    .
    (_) @arg)] @span @sink.argv
  (#match? @_sh "^[rbuRBU]?[\"'](/usr)?(/local)?(/bin/)?(ba|z|da|k|a)?sh[\"']$")
  (#match? @_flag "^[rbuRBU]?[\"']-[a-zA-Z]*c[a-zA-Z]*[\"']$"))
