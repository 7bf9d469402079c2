; BA302 script-file-exec (shell scripts): `echo "$x" > file`, `printf ... > file`, `cat > file <<EOF`.
(redirected_statement
  body: (command
    name: (command_name (word) @_prog)) @arg
  redirect: (file_redirect
    destination: (_) @sink.file)
  (#any-of? @_prog "echo" "printf" "cat")) @span
