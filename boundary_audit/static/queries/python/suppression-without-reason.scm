; BA901 suppression-without-reason (Python): comments holding an inline suppression.
((comment) @span
  (#match? @span "boundary-audit:"))
