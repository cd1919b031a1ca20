-- Level filters are now declared by each kind (core/kinds.h,
-- sf_level_filter) rather than taken from the first eight scalars of a
-- level's puzzle and stats. Lattice and racetrack keep the tags they had;
-- digger gains `difficulty` (params.difficulty, the preset's name) and the
-- two stats the old rule cut off at eight, `max_taps` and `recorded_stars`.
-- This step gives the digger levels stored before it those three tags,
-- read from their documents as server/jobs.c reads new levels: a number
-- as its num and its text (the integers here print the same in SQL as with
-- %.17g), a string as its text.
INSERT OR IGNORE INTO level_tags (level_id, name, text, num)
	SELECT id, 'difficulty', json_extract(doc, '$.params.difficulty'), NULL FROM levels
	WHERE kind = 'digger' AND json_type(doc, '$.params.difficulty') = 'text';
INSERT OR IGNORE INTO level_tags (level_id, name, text, num)
	SELECT id, 'max_taps', CAST(json_extract(doc, '$.stats.max_taps') AS TEXT),
	       json_extract(doc, '$.stats.max_taps') FROM levels
	WHERE kind = 'digger' AND json_type(doc, '$.stats.max_taps') = 'integer';
INSERT OR IGNORE INTO level_tags (level_id, name, text, num)
	SELECT id, 'recorded_stars', CAST(json_extract(doc, '$.stats.recorded_stars') AS TEXT),
	       json_extract(doc, '$.stats.recorded_stars') FROM levels
	WHERE kind = 'digger' AND json_type(doc, '$.stats.recorded_stars') = 'integer';
