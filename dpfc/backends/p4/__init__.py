"""The P4 back end: the SwitchVM data plane generated for bmv2 (v1model) and Tofino (TNA),
and the bmv2 driver (docs/p4.md)."""
