; BA901 suppression-without-reason (Rust): comments holding an inline suppression.
([(line_comment) (block_comment)] @span
  (#match? @span "boundary-audit:"))
