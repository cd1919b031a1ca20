-- wrk_mix.lua - the request mix of tests/soak/wrk_soak.sh: what a level
-- service sees from game clients, designers and dashboards at once.
--
--   55 %  GET /v1/levels/{id}          a level (game clients)
--    5 %  GET /v1/evaluations/square/S an anonymous evaluation of a random
--                                      length-12 sequence (4 096 of them, so
--                                      most are new to a small bounded cache:
--                                      issue 18's flood); past the evaluations
--                                      running at once, a deliberate 429
--    5 %  GET /v1/levels/{id}.svg      its picture
--    5 %  GET /v1/levels?kind=...      a listing page
--   20 %  GET /v1/jobs/{id}            a status poll: a seeded job, or one
--                                      this thread submitted (its Location)
--   10 %  POST /v1/jobs                a small digger or lattice job with a
--                                      random seed; past the queue bound the
--                                      answer is a deliberate 429
--
-- Arguments (after --): the ids to read, each as L:<level id> or J:<job id>.
-- done() prints one line, "SOAK key=value ...", that wrk_soak.sh parses:
-- requests, latency percentiles (microseconds), every status seen, and
-- wrk's socket errors.

local threads = {}
local counter = 1

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local levels, jobs, mine, nmine = {}, {}, {}, 0
statuses = {}

function init(args)
  for _, a in ipairs(args) do
    local kind, value = a:match("^(%a):(.+)$")
    if kind == "L" then table.insert(levels, value) end
    if kind == "J" then table.insert(jobs, value) end
  end
  math.randomseed(os.time() * 1000 + id) -- id: this thread's number (setup)
  if #levels == 0 or #jobs == 0 then
    error("wrk_mix.lua: give level ids (L:...) and job ids (J:...) after --")
  end
end

local json = { ["Content-Type"] = "application/json" }
local kinds = { "digger", "lattice" }

local function submission()
  local seed = math.random(0, 2 ^ 31)
  local body
  if math.random() < 0.5 then
    body = string.format(
      '{"kind":"digger","seed":%d,"params":{"difficulty":"easiest","count":1}}', seed)
  else
    body = string.format(
      '{"kind":"lattice","seed":%d,"params":{"length":10,"generations":5,"population":10}}', seed)
  end
  return wrk.format("POST", "/v1/jobs", json, body)
end

local function evaluation()
  local s = {}
  for i = 1, 12 do s[i] = math.random() < 0.5 and "H" or "P" end
  return wrk.format("GET", "/v1/evaluations/square/" .. table.concat(s))
end

function request()
  local r = math.random()
  if r < 0.55 then
    return wrk.format("GET", "/v1/levels/" .. levels[math.random(#levels)])
  elseif r < 0.60 then
    return evaluation()
  elseif r < 0.65 then
    return wrk.format("GET", "/v1/levels/" .. levels[math.random(#levels)] .. ".svg")
  elseif r < 0.70 then
    return wrk.format("GET", "/v1/levels?page_size=10&kind=" .. kinds[math.random(#kinds)])
  elseif r < 0.90 then
    if nmine > 0 and math.random() < 0.5 then
      return wrk.format("GET", mine[math.random(nmine)])
    end
    return wrk.format("GET", "/v1/jobs/" .. jobs[math.random(#jobs)])
  end
  return submission()
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 202 then
    local loc = headers["Location"]
    if loc and nmine < 64 then -- up to 64 jobs this thread submitted, to poll them
      nmine = nmine + 1
      mine[nmine] = loc
    elseif loc then
      mine[math.random(nmine)] = loc
    end
  end
end

function done(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do
    for status, n in pairs(t:get("statuses")) do
      all[status] = (all[status] or 0) + n
    end
  end
  local parts = {
    string.format("requests=%d", summary.requests),
    string.format("duration_us=%d", summary.duration),
    string.format("p50_us=%d", latency:percentile(50)),
    string.format("p90_us=%d", latency:percentile(90)),
    string.format("p99_us=%d", latency:percentile(99)),
    string.format("max_us=%d", latency.max),
    string.format("connect=%d", summary.errors.connect),
    string.format("read=%d", summary.errors.read),
    string.format("write=%d", summary.errors.write),
    string.format("timeout=%d", summary.errors.timeout),
  }
  for status, n in pairs(all) do
    table.insert(parts, string.format("s%d=%d", status, n))
  end
  io.write("SOAK " .. table.concat(parts, " ") .. "\n")
end
