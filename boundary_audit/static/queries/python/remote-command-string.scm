; BA401 remote-command-string (Python): command strings run by a remote shell or sandbox.

; paramiko: client.exec_command(cmd); channel.exec_command(cmd)
(call
  function: (attribute
    attribute: (identifier) @_m) @sink.remote
  arguments: (argument_list . (_) @arg)
  (#eq? @_m "exec_command")) @span

; asyncssh / fabric: conn.run(cmd) on a receiver named like a connection
(call
  function: (attribute
    object: (_) @_recv
    attribute: (identifier) @_m) @sink.remote
  arguments: (argument_list . (_) @arg)
  (#eq? @_m "run")
  (#match? @_recv "(^|[._])(conn|connection|ssh|ssh_conn|remote|ssh_client|c)$")) @span

; sandbox APIs: sandbox.exec(cmd), sandbox.commands.run(cmd), sandbox.process.exec(cmd)
(call
  function: (attribute
    object: (_) @_recv
    attribute: (identifier) @_m) @sink.remote
  arguments: (argument_list . (_) @arg)
  (#any-of? @_m "exec" "run_command" "execute_command" "run" "exec_command" "run_shell")
  (#match? @_recv "(sandbox|sbx|devbox|runtime|workspace)(\\.commands|\\.process)?$")) @span

; Docker SDK: container.exec_run(cmd), container.exec_run(cmd=...), client.containers.run(image, cmd)
(call
  function: (attribute
    attribute: (identifier) @_m) @sink.docker
  arguments: (argument_list
    .
    [(string) (concatenated_string) (identifier) (list) (tuple) (call) (attribute)
     (binary_operator) (subscript) (conditional_expression) (list_comprehension)] @arg)
  (#eq? @_m "exec_run")) @span

(call
  function: (attribute
    attribute: (identifier) @_m) @sink.docker
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @_kw
      value: (_) @arg))
  (#eq? @_m "exec_run")
  (#eq? @_kw "cmd")) @span

(call
  function: (attribute
    object: (attribute attribute: (identifier) @_c)
    attribute: (identifier) @_m) @sink.docker
  arguments: (argument_list
    .
    (_)
    .
    [(string) (identifier) (list) (call) (attribute) (binary_operator) (subscript)] @arg)
  (#eq? @_c "containers")
  (#eq? @_m "run")) @span

(call
  function: (attribute
    object: (attribute attribute: (identifier) @_c)
    attribute: (identifier) @_m) @sink.docker
  arguments: (argument_list
    (keyword_argument
      name: (identifier) @_kw
      value: (_) @arg))
  (#eq? @_c "containers")
  (#eq? @_m "run")
  (#eq? @_kw "command")) @span

; asyncio.to_thread(container.exec_run, cmd) and run_in_executor(None, container.exec_run, cmd)
(call
  arguments: (argument_list
    (attribute attribute: (identifier) @_m) @sink.docker
    .
    (_) @arg)
  (#eq? @_m "exec_run")) @span
