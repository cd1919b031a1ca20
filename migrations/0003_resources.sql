-- Uploaded resources of every type in one table, keyed by (type, name): the
-- server stores what a kind's sf_resource_kind validated without knowing
-- the type (racetrack's experience models are type 'px_model'). The body is
-- kept exactly as sent and a name is taken for good within its type, which
-- is what lets a requeued job rerun with the same resource and so the same
-- result. The models of 0002 move here unchanged.
CREATE TABLE resources (
	type TEXT NOT NULL,
	name TEXT NOT NULL,
	format TEXT NOT NULL,
	body TEXT NOT NULL,
	created INTEGER NOT NULL,
	PRIMARY KEY (type, name)
);
INSERT INTO resources (type, name, format, body, created)
	SELECT 'px_model', name, format, body, created FROM px_models;
DROP TABLE px_models;
