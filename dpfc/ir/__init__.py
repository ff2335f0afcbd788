"""The SSA IR (:mod:`.core`), its text form (:mod:`.printer`, :mod:`.parser`), the verifier
(:mod:`.verify`) and the reference interpreter (:mod:`.interp`)."""
