-- history: a runner's past, kept so the viewer can scrub back and a run can be recorded and replayed.
--
-- The past is a log and keyframes. The log is everything that happened to the runner, in order: each
-- fixed step, each input event the scene was given, each hot reload, and the camera whenever it moved
-- (scripts read the mouse ray through it). A keyframe is the world's snapshot (engine/snapshot.c) with
-- the scene's Lua data (keep.lua: its state, globals, handlers, the upvalues of its functions), the
-- impetus.random and math.random seeds, the input state, the viewer's drag and the scene's code as it
-- was then. To show tick t, the history restores the last keyframe at or before t and plays the log
-- forward to t; the steps are deterministic, so that is the run as it happened, bit for bit.
--
-- Code: a hot reload takes a keyframe at once, so playing forward never crosses a reload, and frames
-- before a reload are re-simulated with the code they ran under (the keyframes before it hold that
-- code: the old scene table, the old globals and upvalues). Resuming from a point before the last
-- reload reloads the scene's files as they are now: the run continues from there with the new code.
--
-- Memory is bounded: keyframes every K ticks, K doubled (every other keyframe dropped) whenever they
-- hold more than the budget (64 MB by default), the oldest dropped once they reach further back than
-- the span (30 s by default) or when K is as large as a quarter of the span. The log before the
-- oldest keyframe goes with it, unless the history records (keep_log: a recording needs all of it).
--
--   History.new(runner, {budget = bytes, span = seconds, keep_log = bool})
--   h:reach()          oldest tick, newest tick, current tick
--   h:seek(tick)       the runner at that tick (paused); h:in_past() while it is not the newest
--   h:bytes()          memory the history holds (keyframes exactly, the log estimated)
--   h:entries(from)    the log from an absolute position (a recording reads it)
local core = require "impetus.core"
local keep = require "impetus.keep"
local random = require "impetus.random"
local settings = require "impetus.settings"

local History = {}
History.__index = History

local DEFAULT_BUDGET = 64 * 1024 * 1024
local DEFAULT_SPAN = 30
local FIRST_INTERVAL = 0.25 -- seconds between keyframes until the budget asks for fewer
local ENTRY_BYTES, EVENT_BYTES = 16, 160 -- the log's estimated cost: a step, an event or camera entry

function History.new(runner, opts)
  opts = opts or {}
  local self = setmetatable({
    runner = runner,
    budget = opts.budget or DEFAULT_BUDGET,
    span = opts.span or DEFAULT_SPAN,
    keep_log = opts.keep_log or false,
  }, History)
  runner.history = self
  -- math.random's state cannot be read: the runner seeds it before setup and after (Runner:restart), and
  -- the history at every keyframe, so that a keyframe knows it
  runner.math_seed = runner.math_seed or runner.seed
  self:reset()
  return self
end

-- ---- what a keyframe holds ---------------------------------------------------------------------------------

-- is fn the scene's own (defined in its file or a module next to it)? Their upvalues are the scene's data.
function History:scene_function(fn)
  local info = debug.getinfo(fn, "S")
  if info.what ~= "Lua" then return false end
  local r = self.runner
  if info.source == "@" .. r.path then return true end
  for _, file in pairs(r.modules) do
    if info.source == "@" .. file then return true end
  end
  return false
end

function History:lua_roots()
  local r = self.runner
  local roots = { r.state, r.scene, r.env or {} }
  local own = {}
  for name in pairs(r.modules) do
    own[name] = true
    if type(package.loaded[name]) == "table" then roots[#roots + 1] = package.loaded[name] end
  end
  local contacts = require "impetus.contacts"
  local sound = require "impetus.sound"
  if r.world then
    roots[#roots + 1] = contacts.handlers_of(r.world)
    roots[#roots + 1] = sound.registrations_of(r.world)
  end
  return roots, own
end

-- the host's objects a scene may reach (active.runner, a handler that keeps the camera): not the scene's
function History:host_tables()
  local r = self.runner
  local host = { r, self, r.camera, r.input, self.log, self.keyframes }
  if r.env and type(rawget(r.env, "coroutine")) == "table" then host[#host + 1] = rawget(r.env, "coroutine") end
  if r.viewer then host[#host + 1] = r.viewer end
  if r.viewer and r.viewer.drag then host[#host + 1] = r.viewer.drag end
  return host
end

local function copy_set(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end

-- the runner as it is now, at log position pos
function History:capture(pos)
  local r = self.runner
  local roots, own = self:lua_roots()
  local modules = {}
  for name in pairs(r.modules) do modules[name] = package.loaded[name] end
  local kf = {
    pos = pos, tick = r.tick,
    snap = r.world:snapshot(),
    kept = keep.take(roots, own, function(fn) return self:scene_function(fn) end, self:host_tables()),
    random = random.state(),
    math_seed = self.math_seed,
    input = { keys = copy_set(r.input.keys), buttons = copy_set(r.input.buttons), x = r.input.x, y = r.input.y },
    drag = r.viewer and r.viewer.drag, button = r.viewer and r.viewer.button, before_step = r.before_step,
    drag_fields = r.viewer and r.viewer.drag and copy_set(r.viewer.drag),
    scene = r.scene, env = r.env, modules = modules, module_files = copy_set(r.modules), reloads = r.reloads,
    pose = self.last_pose,
  }
  kf.bytes = kf.snap.bytes + kf.kept.bytes + 512
  return kf
end

-- the runner as keyframe kf holds it
function History:apply(kf)
  local r = self.runner
  r.world:restore(kf.snap)
  keep.put_back(kf.kept)
  random.set_state(kf.random)
  if kf.math_seed then math.randomseed(kf.math_seed) end
  self.math_seed = kf.math_seed
  local i = r.input
  i.keys, i.buttons, i.x, i.y = copy_set(kf.input.keys), copy_set(kf.input.buttons), kf.input.x, kf.input.y
  if r.viewer then r.viewer.drag, r.viewer.button = kf.drag, kf.button end
  if kf.drag then -- the viewer's drag as it was (its spring's target moves with the mouse)
    for k in pairs(kf.drag) do kf.drag[k] = nil end
    for k, x in pairs(kf.drag_fields) do kf.drag[k] = x end
  end
  r.before_step = kf.before_step
  if r.scene ~= kf.scene then
    r.scene = kf.scene
    r.scene_keys = settings.scene_keys(kf.scene)
  end
  r.modules = copy_set(kf.module_files)
  for name, mod in pairs(kf.modules) do package.loaded[name] = mod end
  if kf.pose then
    r.camera:set_pose(kf.pose)
    i.width, i.height = kf.pose.width, kf.pose.height
  end
  r.tick = kf.tick
  self.pos = kf.pos
end

-- ---- the log ------------------------------------------------------------------------------------------------

-- a new world (start, restart): nothing before it can be gone back to; a recording's log goes on
function History:reset()
  for _, kf in ipairs(self.keyframes or {}) do kf.snap:release() end
  if not (self.keep_log and self.log) then
    self.log, self.first, self.last, self.pos = {}, 1, 0, 0
    self.log_bytes = 0
  end
  self.step_pos = {}           -- tick -> position of its step entry
  self.keyframes = {}
  local r = self.runner
  self.interval = math.max(1, math.floor(FIRST_INTERVAL / r:step_dt() + 0.5))
  self.seed_base = r.math_seed * 1000003
  self.math_seed = r.math_seed + 1 -- as Runner:restart left it after setup
  self.latest = { scene = r.scene, reloads = r.reloads }
  self.last_pose = nil
  if r.world then
    self.keyframes[1] = self:capture(self.last)
    self.keyframes[1].pinned = true
  end
end

-- the viewer restarts the scene on the key event just logged (R): a replay's viewer does the same there,
-- after the scene's own handler (a restart the scene asks for is replayed by replaying what asked)
function History:note_restart()
  local e = self.log[self.last]
  if e and e.kind == "event" then e.e.viewer_restart = true end
end

-- update asked for a restart: the step that ran it is replayed, and restarts the same way
function History:note_step_restart()
  self:append { kind = "step", tick = self.runner.tick, restarts = true }
end

-- math.random is set at every keyframe (from the tick, deterministically): scenes that draw math.random
-- in update rewind too
function History:reseed(tick)
  self.math_seed = self.seed_base + tick
  math.randomseed(self.math_seed)
end

function History:append(entry)
  self.last = self.last + 1
  self.log[self.last] = entry
  self.pos = self.last
  self.log_bytes = self.log_bytes + (entry.kind == "step" and ENTRY_BYTES or EVENT_BYTES)
end

function History:in_past() return self.pos < self.last end

-- the future beyond the current position goes (a new timeline starts here)
function History:truncate()
  if self.pos >= self.last then return end
  for p = self.pos + 1, self.last do
    local e = self.log[p]
    self.log_bytes = self.log_bytes - (e.kind == "step" and ENTRY_BYTES or EVENT_BYTES)
    if e.kind == "step" and not e.restarts then self.step_pos[e.tick] = nil end
    self.log[p] = nil
  end
  self.last = self.pos
  self.last_pose = nil -- the next entry says where the camera is
  local kfs = self.keyframes
  while #kfs > 1 and kfs[#kfs].pos > self.pos do table.remove(kfs).snap:release() end
end

-- live input while showing the past: the run goes on from here, with the code as it is now (a reload
-- when the scene's files were reloaded after this point), and the input as it is now (nothing held)
function History:resume()
  if not self:in_past() then return end
  self:truncate()
  local r = self.runner
  r:event { type = "focuslost" } -- (logged: the viewer lets go of a drag, the input of every key)
  if r.scene ~= self.latest.scene then r:reload() end
end

function History:camera_pose()
  local r = self.runner
  local p = r.camera:pose()
  p.width, p.height = r.input.width, r.input.height
  return p
end

local function same_pose(a, b)
  if not a or not b then return false end
  for k, v in pairs(a) do
    if type(v) == "table" then
      for i = 1, #v do if v[i] ~= b[k][i] then return false end end
    elseif b[k] ~= v then return false end
  end
  return true
end

-- the camera and window size when they changed since the log last said (scripts read the mouse through
-- them); returns whether an entry was made
function History:note_camera()
  local p = self:camera_pose()
  if same_pose(p, self.last_pose) then return end
  self.last_pose = p
  self:append { kind = "camera", pose = p }
end

local EVENT_FIELDS = { "type", "key", "isrepeat", "x", "y", "dx", "dy", "button" }

-- an input event the scene is about to get
function History:note_event(e)
  if self:in_past() then self:resume() end
  self:note_camera()
  local copy = {}
  for _, k in ipairs(EVENT_FIELDS) do copy[k] = e[k] end
  self:append { kind = "event", e = copy }
end

-- a step is about to run: the camera it reads
function History:before_step()
  if self:in_past() then self:resume() end
  self:note_camera()
end

-- a step ran; a keyframe when one is due
function History:after_step()
  local r = self.runner
  local entry = { kind = "step", tick = r.tick }
  local due = r.tick % self.interval == 0
  if due then
    self:reseed(r.tick)
    entry.seed = self.math_seed
  end
  self:append(entry)
  self.step_pos[r.tick] = self.last
  if due then self:add_keyframe(self:capture(self.last)) end
end

-- the scene was reloaded (sources: what its files held, for a recording): a keyframe with the new code
function History:note_reload(sources)
  local r = self.runner
  if self:in_past() then self:truncate() end
  self:reseed(r.tick)
  self:append { kind = "reload", tick = r.tick, sources = self.keep_log and sources or nil, seed = self.math_seed }
  self.latest = { scene = r.scene, reloads = r.reloads }
  local kf = self:capture(self.last)
  kf.pinned = true
  self:add_keyframe(kf)
end

-- ---- memory ---------------------------------------------------------------------------------------------------

function History:bytes()
  local n = self.keep_log and 0 or self.log_bytes
  for _, kf in ipairs(self.keyframes) do n = n + kf.bytes end
  return n
end

function History:drop_log_before(pos)
  if self.keep_log then return end
  for p = self.first, pos - 1 do
    local e = self.log[p]
    if e then
      self.log_bytes = self.log_bytes - (e.kind == "step" and ENTRY_BYTES or EVENT_BYTES)
      if e.kind == "step" and not e.restarts and self.step_pos[e.tick] == p then self.step_pos[e.tick] = nil end
      self.log[p] = nil
    end
  end
  self.first = math.max(self.first, pos)
end

function History:drop_oldest()
  local kf = table.remove(self.keyframes, 1)
  kf.snap:release()
  self:drop_log_before(self.keyframes[1].pos)
end

function History:add_keyframe(kf)
  local kfs = self.keyframes
  kfs[#kfs + 1] = kf
  local span_ticks = math.ceil(self.span / self.runner:step_dt())
  -- what reaches further back than the span goes, but one keyframe at or before its start stays
  while #kfs > 2 and kfs[2].tick <= kf.tick - span_ticks do self:drop_oldest() end
  -- over budget: keyframes half as often (keeping the oldest, the newest and a reload's), then the oldest
  while self:bytes() > self.budget and #kfs > 1 do
    if self.interval * 2 <= span_ticks / 4 then
      self.interval = self.interval * 2
      local kept = {}
      for i, k in ipairs(kfs) do
        if i == 1 or i == #kfs or k.pinned or k.tick % self.interval == 0 then kept[#kept + 1] = k
        else k.snap:release() end
      end
      self.keyframes, kfs = kept, kept
    else
      self:drop_oldest()
    end
  end
end

-- ---- going back and forth ------------------------------------------------------------------------------------

-- oldest reachable tick, the newest tick, and the one shown
function History:reach()
  local newest = self.runner.tick
  local start = self.keyframes[1] and self.keyframes[1].pos or self.first
  for p = self.last, start + 1, -1 do
    local e = self.log[p]
    if e and e.kind == "step" then newest = e.tick break end
    if e and e.kind == "reload" then newest = e.tick break end
  end
  return self.keyframes[1] and self.keyframes[1].tick or newest, newest, self.runner.tick
end

-- play one log entry (the runner replays: the history notes nothing, the viewer takes no keys, sounds
-- are quiet)
function History.play_entry(r, e)
  if e.kind == "step" then
    r:step()
    if e.seed then math.randomseed(e.seed) end

  elseif e.kind == "event" then
    r:event(e.e)
  elseif e.kind == "camera" then
    r.camera:set_pose(e.pose)
    r.input.width, r.input.height = e.pose.width, e.pose.height
  elseif e.kind == "reload" then
    r:reload(e.sources)
    if e.seed then math.randomseed(e.seed) end
  end
end

-- the runner at tick t (clamped to the reach), paused
function History:seek(t)
  local r = self.runner
  if not r.world or r.error then return false end
  local oldest, newest = self:reach()
  t = math.max(oldest, math.min(newest, math.floor(t)))
  local target = self.step_pos[t] or (t == oldest and self.keyframes[1].pos) or nil
  if not target then return false end
  target = math.max(target, self.keyframes[1].pos) -- (the oldest keyframe may follow its tick's step: a reload's)
  if target == self.pos then return true end
  r.paused = true
  local live_pose = self:camera_pose()
  local from
  for i = #self.keyframes, 1, -1 do
    if self.keyframes[i].pos <= target then from = self.keyframes[i] break end
  end
  if not (self.pos < target and self.pos >= from.pos) then self:apply(from) end
  local sound = require "impetus.sound"
  r.replaying = true
  sound.quiet(true)
  local ok, err = pcall(function()
    for p = self.pos + 1, target do
      History.play_entry(r, self.log[p])
      if r.error then error(r.error, 0) end
      self.pos = p
    end
  end)
  sound.quiet(false)
  r.replaying = false
  r.camera:set_pose(live_pose)
  r.input.width, r.input.height = live_pose.width, live_pose.height
  if not ok then
    r:fail("history: replaying the past failed: " .. tostring(err))
    return false
  end
  r.tick = t
  return true
end

-- the log entries from absolute position `from` to the newest
function History:entries(from)
  local out = {}
  for p = math.max(from or 1, self.first), self.last do out[#out + 1] = self.log[p] end
  return out
end

History.clock = core.clock
return History
