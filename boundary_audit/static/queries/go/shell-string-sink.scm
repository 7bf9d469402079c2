; BA101 shell-string-sink (Go): argv literals whose head is a shell with -c.
; exec.Command("bash", "-c", x) is found by argv-spawn and classified here.
((composite_literal
   type: (slice_type)
   body: (literal_value
     .
     (literal_element (interpreted_string_literal) @_sh)
     .
     (literal_element (interpreted_string_literal) @_flag)
     .
     (literal_element) @arg)) @span @sink.argv
  (#match? @_sh "^\"(/usr)?(/local)?(/bin/)?(ba|z|da|k|a)?sh\"$")
  (#match? @_flag "^\"-[a-zA-Z]*c[a-zA-Z]*\"$"))
