"""Conformance: the same packets through the simulator and bmv2 give the same bytes."""
