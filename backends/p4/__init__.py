"""The P4 back end: the SwitchVM data plane generated for bmv2 (v1model) and Tofino (TNA)
from one model, the bmv2 control, and BF-RT scripts that install images (docs/p4.md)."""
