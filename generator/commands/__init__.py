"""Stage 5, the commands: `plate check | build | serve | pdf | new`, thin and series-wide."""
