"""Fuzzing: time-boxed campaigns that find, classify and shrink discrepancies
(:mod:`.campaign`), their signatures (:mod:`.signature`) and what they leave on
disk (:mod:`.artifacts`)."""
