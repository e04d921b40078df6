"""Conformance test-suite and fuzzing harness for ONNX Gather and GatherElements."""

__version__ = "0.1.0"
