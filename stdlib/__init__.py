"""The DPF standard library (``import stdlib.hash;`` in a ``.dpf`` file): modules written in
the DPF language, shipped as the data of this package (``dpfc.stdlib``); no Python here."""
