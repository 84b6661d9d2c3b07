"""Stage 4, write the site: every plate gathered in memory, then written at once, with PDFs and publishing files."""
