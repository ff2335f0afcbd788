"""Code generation: schedules -> bundles (:mod:`.emit`), object files (:mod:`.objfile`) and
the resource report (:mod:`.report`)."""
