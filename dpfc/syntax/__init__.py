"""The DPF language front end: AST (:mod:`.ast`), parser and canonical printer."""
