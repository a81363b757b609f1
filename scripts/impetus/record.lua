-- record: a run written to a file and played back bit for bit (impetus --record run.imprec, --replay).
--
-- A recording is the scene's files as they were loaded, the seeds, the world's snapshot after setup, and
-- the history's log (history.lua) from there: every fixed step, every input event the scene got with
-- the camera it was read through, every hot reload with the files' new texts, every restart. Playing it
-- back runs the scene from the recorded texts (the files on disk may have changed since), restores the
-- snapshot, and plays the log: the steps are deterministic, so the final state is the recorded run's
-- to the last bit, and so is its state hash (state_hash.lua), which both runs print.
--
-- The file is a Lua table constructor of plain data (numbers written by their exact bits), read back
-- with `load` in an empty environment.
--
--   record.start(runner)           before runner:start(): log everything from the first setup on
--   record.save(runner, path)      write the recording
--   record.load(path)              the recording, or an error naming the file
--   record.player(rec, opts)       a runner set to play it: player:advance(frame_dt), player:finish()
local core = require "impetus.core"
local History = require "impetus.history"
local Runner = require "impetus.runner"
local state_hash = require "impetus.state_hash"

local record = {}

local FORMAT = 1
local HEADER = "-- impetus recording, format "

-- ---- plain data as Lua source ----------------------------------------------------------------------------

local function encode(v, out)
  local t = type(v)
  if t == "number" then
    if math.type(v) == "integer" then out[#out + 1] = string.format("%d", v)
    elseif v ~= v then out[#out + 1] = "0/0"
    elseif v == math.huge then out[#out + 1] = "1/0"
    elseif v == -math.huge then out[#out + 1] = "-1/0"
    else out[#out + 1] = string.format("%a", v) end
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif t == "boolean" then
    out[#out + 1] = tostring(v)
  elseif t == "table" then
    out[#out + 1] = "{"
    local n = #v
    for i = 1, n do encode(v[i], out) out[#out + 1] = "," end
    local keys = {}
    for k in pairs(v) do
      if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
    end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      out[#out + 1] = "["
      encode(k, out)
      out[#out + 1] = "]="
      encode(v[k], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}\n"
  else
    error("record: cannot write a " .. t, 0)
  end
end

-- ---- recording ----------------------------------------------------------------------------------------------

function record.start(runner)
  local h = History.new(runner, { keep_log = true })
  runner.recording = { history = h }
end

function record.save(runner, path)
  local rec = runner.recording
  if not rec then error("record.save: the runner is not recording", 2) end
  local h = rec.history
  if not rec.snapshot then error("record.save: the scene never started, nothing was recorded", 2) end
  local data = {
    format = FORMAT, scene = runner.path, dt = runner.dt, seed = runner.seed, math_seed = runner.math_seed,
    size = { runner.input.width, runner.input.height }, sources = rec.sources, snapshot = rec.snapshot,
    log = h:entries(rec.first), hash = runner.world and state_hash.hash(runner.world) or nil,
  }
  local out = { HEADER, tostring(FORMAT), ": a scene's run, played back by `impetus --replay <this file>`\nreturn " }
  encode(data, out)
  local f, err = io.open(path, "wb")
  if not f then error("impetus: cannot write " .. path .. ": " .. tostring(err), 0) end
  f:write(table.concat(out))
  f:close()
  return data.hash
end

-- the scene started (Runner:start's setup ran): what the recording starts from
function record.started(runner)
  local rec = runner.recording
  if not rec or rec.snapshot or not runner.world then return end
  rec.snapshot = runner.world:snapshot():encode()
  rec.sources = runner:sources_now()
  rec.first = rec.history.last + 1
end

-- ---- playing back ------------------------------------------------------------------------------------------

function record.load(path)
  local f, err = io.open(path, "rb")
  if not f then error("impetus: cannot open the recording " .. path .. ": " .. tostring(err), 0) end
  local text = f:read("a")
  f:close()
  local format = text:match("^" .. HEADER:gsub("%p", "%%%0") .. "(%d+)")
  if not format then error("impetus: " .. path .. " is not an impetus recording", 0) end
  if tonumber(format) ~= FORMAT then
    error(string.format("impetus: %s is a recording of format %s; this build plays format %d", path, format, FORMAT), 0)
  end
  local chunk, cerr = load(text, "=" .. path, "t", {})
  if not chunk then error("impetus: " .. path .. " is corrupt: " .. tostring(cerr), 0) end
  local ok, rec = pcall(chunk)
  if not ok or type(rec) ~= "table" or type(rec.log) ~= "table" or type(rec.snapshot) ~= "string" then
    error("impetus: " .. path .. " is corrupt: " .. (ok and "not a recording's table" or tostring(rec)), 0)
  end
  return rec
end

local Player = {}
Player.__index = Player

-- a runner that plays rec: its scene from the recorded texts, its seeds, its snapshot after setup.
-- opts: viewer (attach a viewer: the recorded mouse drags need one; true without a window)
function record.player(rec, opts)
  opts = opts or {}
  local r = Runner.new(rec.scene, { dt = rec.dt, seed = rec.seed, sources = rec.sources, size = rec.size, viewer = opts.viewer })
  r.math_seed = rec.math_seed
  r:start()
  if not r.world then error("impetus: the recorded scene did not start: " .. tostring(r.error), 0) end
  r.world:restore(core.decode_snapshot(rec.snapshot))
  return setmetatable({ runner = r, rec = rec, next = 1, accumulator = 0 }, Player)
end

function Player:done() return self.next > #self.rec.log or self.runner.error ~= nil end

-- play the next entry; returns whether it was a step
function Player:play_one()
  local e = self.rec.log[self.next]
  self.next = self.next + 1
  local r = self.runner
  r.replaying = true
  History.play_entry(r, e)
  r.replaying = false
  return e.kind == "step"
end

-- play on by a frame's time at the recorded step (as the runner advances); returns the steps played
function Player:advance(frame_dt)
  local dt = self.runner:step_dt()
  self.accumulator = self.accumulator + frame_dt
  local n = 0
  while not self:done() and self.accumulator >= dt * (1 - 1e-9) and n < 8 do
    if self:play_one() then
      self.accumulator = self.accumulator - dt
      n = n + 1
    end
  end
  if self:done() then self.accumulator = 0 end
  return n
end

-- play everything left
function Player:finish()
  while not self:done() do self:play_one() end
  return self.runner
end

return record
