"""mutharness: hand-picked mutation testing with evidence a reviewer can re-derive."""
