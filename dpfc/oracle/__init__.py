"""Semantic oracles: the direct evaluator of checked DPF syntax trees (:mod:`.ast_eval`)."""
