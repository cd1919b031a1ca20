-- submit.lua - wrk script for the submission case of bench/http_bench.sh:
-- every request is POST /v1/jobs of a small digger job with its own seed
-- (a job is durable before its 202, so each costs a store write). done()
-- prints "SUBMIT accepted=N other=N" for the script to check that every
-- answer was a 202.
local counter = 0
local json = { ["Content-Type"] = "application/json" }
accepted, other = 0, 0 -- globals: done() reads them per thread
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

-- SUBMIT_INTERVAL_MS (environment): each connection waits that long after
-- an answer before its next submission, so 64 connections at 64 ms offer
-- about 1 000 jobs/s; unset, every connection submits as fast as answered.
local interval = tonumber(os.getenv("SUBMIT_INTERVAL_MS") or "")
if interval then
  function delay()
    return interval
  end
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"kind":"digger","seed":%d,"params":{"difficulty":"easiest","count":1}}',
    counter * 7919 + math.random(0, 7918))
  return wrk.format("POST", "/v1/jobs", json, body)
end

function response(status, headers, body)
  if status == 202 then accepted = accepted + 1 else other = other + 1 end
end

function done(summary, latency, requests)
  local a, o = 0, 0
  for _, t in ipairs(threads) do
    a = a + t:get("accepted")
    o = o + t:get("other")
  end
  io.write(string.format("SUBMIT accepted=%d other=%d\n", a, o))
end
