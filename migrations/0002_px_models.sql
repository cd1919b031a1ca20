-- Player-experience models that designers upload (POST /v1/px-models) and
-- racetrack jobs name in params.px_model. The body is kept exactly as it
-- was sent, so GET /v1/px-models/{name} returns the same bytes; a model is
-- immutable once stored (a name is taken for good), which is what lets a
-- requeued job rerun with the same model and so the same result.
CREATE TABLE px_models (
	name TEXT PRIMARY KEY,
	format TEXT NOT NULL CHECK (format IN ('csv', 'json')),
	body TEXT NOT NULL,
	traces INTEGER NOT NULL CHECK (traces >= 1),
	created INTEGER NOT NULL
);
