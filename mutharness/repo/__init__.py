"""The repository side: git, the source repository, the workspace, file primitives."""
