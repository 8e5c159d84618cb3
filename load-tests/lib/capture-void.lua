-- wrk script: the lifecycle after an authorization, each step a request with a new Idempotency-Key: authorizations
-- (POST /v1/authorizations) feed a queue, and each authorization answered 201 is then either captured in full
-- (POST .../captures) or voided (POST .../voids), alternately. Reports how many of each were answered 201, so the
-- capture and void rates come out of one run.
-- Usage: wrk -t1 -c32 -d20s -s capture-void.lua http://127.0.0.1:8080 -- <run-id>
-- Authenticates with the development key (merchant m_123), like post-new-keys.lua; the merchant quota must exceed
-- the run's request count.

local common = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "wrk-common.lua")
local auth_body = common.authorization_body("m_123")
local capture_body = '{"amount":{"value":1299,"currency":"EUR"}}'
local queue = {}
local head, tail = 1, 0
authorizations, captures, voids, others = 0, 0, 0, 0

setup = common.setup
init = common.init

function request()
  if head <= tail then
    local location = queue[head]
    queue[head] = nil
    head = head + 1
    if common.requests() % 2 == 0 then
      return common.post(location .. "/captures", capture_body)
    end
    return common.post(location .. "/voids", "{}")
  end
  return common.post("/v1/authorizations", auth_body)
end

function response(status, headers, body)
  local location = headers["Location"] or headers["location"] or ""
  if status ~= 201 then
    others = others + 1
  elseif location:find("/captures/", 1, true) then
    captures = captures + 1
  elseif location:find("/voids/", 1, true) then
    voids = voids + 1
  else
    authorizations = authorizations + 1
    tail = tail + 1
    queue[tail] = location
  end
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.1f authorizations_ps=%.1f captures_ps=%.1f voids_ps=%.1f " ..
      "p50_ms=%.2f p99_ms=%.2f non_201=%d socket_errors=%d\n",
      summary.requests, seconds, summary.requests / seconds, common.total("authorizations") / seconds,
      common.total("captures") / seconds, common.total("voids") / seconds,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, common.total("others"),
      common.socket_errors(summary)))
end
