-- With authorizer.acquirer-deduplicates: false, a retry looks up the earlier attempts of its authorization (by
-- resource id) before it sends a new attempt id: it reverses them first. Every attempt is recorded before its call.
CREATE INDEX unknown_outcomes_resource ON unknown_outcomes (resource_id);
