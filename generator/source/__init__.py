"""Stage 1, read content: a plate's and a series' files checked field by field into typed content, and its prose."""
