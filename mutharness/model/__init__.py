"""The model: specs, anchors, verdicts, results and the rules over them; it starts no process."""
