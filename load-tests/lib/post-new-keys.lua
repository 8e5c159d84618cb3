-- wrk script: POST /v1/authorizations, every request with a new Idempotency-Key, so each one is a full
-- authorization (claim the key, run the authorizer, store the authorization and the response) and never a replay.
-- Usage: wrk -t1 -c32 -d20s -s post-new-keys.lua http://127.0.0.1:8080 -- <run-id> [merchants]
-- With merchants N > 1, requests go round-robin to merchants m_lt_1 .. m_lt_N, authenticated with the keys
-- pa_lt_merchant_1 .. pa_lt_merchant_N (store-throughput/run.sh configures their hashes).
-- Authenticates with the development key (merchant m_123): start the service with config/dev/config.yaml or
-- -Dauth.api-keys='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123', and a merchant quota above the run's request count
-- (-Didempotency.merchant-quota.max-records=2000000, with -Didempotency.max-keys=4000000: startup refuses a merchant
-- quota above half the in-memory store), or every request past it gets 429.

local common = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "wrk-common.lua")
local bodies = {common.authorization_body("m_123")}
local api_keys = {common.dev_key}

setup = common.setup
common.count_answers_other_than(201)

function init(args)
  common.init(args)
  local merchants = tonumber(args[2] or "1")
  if merchants > 1 then
    bodies, api_keys = {}, {}
    for i = 1, merchants do
      bodies[i] = common.authorization_body("m_lt_" .. i)
      api_keys[i] = "pa_lt_merchant_" .. i
    end
  end
end

function request()
  local m = (common.requests() + 1) % #bodies + 1
  return common.post("/v1/authorizations", bodies[m], api_keys[m])
end
