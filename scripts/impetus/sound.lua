-- sound: impetus.sound, sounds for scenes and games through SDL2_mixer (render/audio.c, the module
-- "impetus.audio" of the host). Headless, offscreen, in specs, and where no audio device opens,
-- everything works the same and plays nothing: files are still checked, plays still counted.
--
--   impetus.sound.load(path)                a Sound from a WAV or OGG file (cached by path and mtime)
--   impetus.sound.synth{kind, ...}          a Sound synthesized in Lua (synth.lua: "thud", "click",
--                                           "tone", "chime", "noise", "boing")
--   sound:play{volume = 1, pitch = 1, pan = 0, loop = false}   returns a voice number (0 when silent)
--   sound:stop()                            stops every voice of this sound
--   sound.plays, sound.last                 how often it played, and the last {volume, pitch, pan}
--   impetus.sound.impact(sound, e [, opts]) in an on_contact handler: plays the sound at a volume
--                                           scaled by the impact speed e.speed (returns the volume)
--   impetus.sound.impacts(world, sound [, opts])   the same for every contact that begins or collides
--                                           in the world, after every step; sound nil removes them
--   impetus.sound.volume(v)                 master volume 0..1 (returns the current one)
--   impetus.sound.available()               true when a device is open (false: silent)
--
-- Impact options: min_speed (0.3 m/s: quieter is silent), max_speed (8 m/s: full volume), volume (1),
-- pitch (1), pitch_spread (0: each impact's pitch varies by up to +- this fraction), bodies (a list:
-- only contacts touching one of them), max_per_step (4: the loudest impacts of a step).
local active = require "impetus.active"
local synth = require "impetus.synth"
local args = require "impetus.args"

local sound = {}

local backend = nil          -- the C module when a device is open
local master = 1
local cache = {}             -- path -> {stamp, Sound}

local Sound = {}
Sound.__index = Sound

local function finite(x) return type(x) == "number" and x == x and x > -math.huge and x < math.huge end

local allowed = false          -- the host allows a device in a window (never headless or offscreen)
local quiet = false            -- plays do nothing: the history is replaying the past
local open_error = nil         -- why the device did not open

-- open the device now; returns true or nil, message
function sound.open(driver)
  if backend then return true end
  local ok, audio = pcall(require, "impetus.audio")
  if not ok then return nil, "no audio module" end
  local opened, err = audio.open(driver)
  if not opened then return nil, err end
  backend = audio
  for _, entry in pairs(cache) do entry.sound.chunk = nil end -- decode again for the device
  return true
end

-- the host's window: the device opens when the scene first loads or plays a sound, so a scene without
-- sound never starts an audio thread; report(message) is told once when no device opens
function sound.allow(report)
  allowed = true
  sound.report = report
end

local function ensure_open()
  if backend or not allowed or open_error then return end
  local ok, err = sound.open()
  if not ok then
    open_error = err
    if sound.report and err ~= "no audio module" then sound.report("sound is off: " .. tostring(err)) end
  end
end

function sound.close()
  if backend then backend.close() end
  backend, allowed, open_error = nil, false, nil
  for _, entry in pairs(cache) do entry.sound.chunk = nil end
end


function sound.volume(v, ...)
  args.at_most("impetus.sound.volume([v])", 1, v, ...)
  if v ~= nil then
    if not finite(v) or v < 0 or v > 1 then error("impetus.sound.volume: argument must be a number in 0..1", 2) end
    master = v
  end
  return master
end

-- the kind of audio file from its first bytes: "wav", "ogg", or nil
local function sniff(path)
  local f, err = io.open(path, "rb")
  if not f then return nil, err end
  local head = f:read(12) or ""
  f:close()
  if head:sub(1, 4) == "RIFF" and head:sub(9, 12) == "WAVE" then return "wav" end
  if head:sub(1, 4) == "OggS" then return "ogg" end
  return nil, path .. " is neither a WAV (RIFF/WAVE) nor an OGG file"
end

local function scene_relative(path)
  local r = active.runner
  local f = io.open(path, "rb")
  if f then f:close() return path end
  if r and r.dir and path:sub(1, 1) ~= "/" then
    local p = r.dir .. "/" .. path
    f = io.open(p, "rb")
    if f then f:close() return p end
  end
  return path
end

-- whether sounds are heard: a device is open (opened now when the host allows one)
function sound.available(...)
  args.at_most("impetus.sound.available()", 0, ...)
  ensure_open()
  return backend ~= nil
end

-- path: a WAV or OGG file, as given or relative to the running scene's folder
function sound.load(path, ...)
  args.at_most("impetus.sound.load(path)", 1, path, ...)
  if type(path) ~= "string" then error("impetus.sound.load: argument 'path' must be a file name", 2) end
  local file = scene_relative(path)
  local kind, err = sniff(file)
  if not kind then error("impetus.sound.load: " .. tostring(err), 2) end
  local t, size = require("impetus.core").mtime(file)
  local stamp = string.format("%s:%s", tostring(t), tostring(size))
  local entry = cache[file]
  if entry and entry.stamp == stamp then return entry.sound end
  local s = setmetatable({ path = file, kind = kind, plays = 0, last = nil }, Sound)
  ensure_open()
  if backend then
    local chunk, lerr = backend.load(file)
    if not chunk then error("impetus.sound.load: " .. tostring(lerr), 2) end
    s.chunk = chunk
  end
  cache[file] = { stamp = stamp, sound = s }
  return s
end

-- a synthesized sound (see synth.lua for the kinds and their parameters)
function sound.synth(def, ...)
  args.at_most("impetus.sound.synth(def)", 1, def, ...)
  local ok, samples, rate = pcall(synth.render, def)
  if not ok then error("impetus.sound.synth: " .. tostring(samples), 2) end
  local s = setmetatable({ wav = synth.wav(samples, rate), kind = "wav", plays = 0, duration = #samples / rate }, Sound)
  return s
end

local function decoded(s)
  ensure_open()
  if not backend then return nil end
  if not s.chunk then
    local chunk, err
    if s.wav then chunk, err = backend.load_wav_bytes(s.wav) else chunk, err = backend.load(s.path) end
    if not chunk then error("sound:play: " .. tostring(err), 3) end
    s.chunk = chunk
  end
  return s.chunk
end

local PLAY_KEYS = { volume = true, pitch = true, pan = true, loop = true }

function Sound:play(opts, ...)
  args.at_most("sound:play([opts])", 1, opts, ...)
  opts = opts or {}
  if type(opts) ~= "table" then error("sound:play: argument must be a table {volume, pitch, pan, loop}", 2) end
  for k in pairs(opts) do
    if not PLAY_KEYS[k] then error("sound:play: unknown option '" .. tostring(k) .. "' (known: volume, pitch, pan, loop)", 2) end
  end
  local volume, pitch, pan = opts.volume or 1, opts.pitch or 1, opts.pan or 0
  if not finite(volume) or volume < 0 or volume > 1 then error("sound:play: option 'volume' must be a number in 0..1", 2) end
  if not finite(pitch) or pitch < 0.125 or pitch > 8 then error("sound:play: option 'pitch' must be a number in 0.125..8 (1: as recorded)", 2) end
  if not finite(pan) or pan < -1 or pan > 1 then error("sound:play: option 'pan' must be a number in -1 (left)..1 (right)", 2) end
  if quiet then return 0 end
  self.plays = self.plays + 1
  self.last = { volume = volume, pitch = pitch, pan = pan }
  local chunk = decoded(self)
  if not chunk then return 0 end
  local voice = backend.play(chunk, volume * master, pitch, pan, opts.loop and true or false)
  return voice or 0
end

function Sound:stop(...)
  args.at_most("sound:stop()", 0, ...)
  if backend and self.chunk then backend.stop(self.chunk) end
end

-- ---- impact sounds ------------------------------------------------------------------------------------------

local IMPACT_KEYS = { min_speed = true, max_speed = true, volume = true, pitch = true, pitch_spread = true,
  bodies = true, max_per_step = true }

local function impact_options(opts, fn)
  opts = opts or {}
  if type(opts) ~= "table" then error(fn .. ": options must be a table", 3) end
  for k in pairs(opts) do
    if not IMPACT_KEYS[k] then
      error(fn .. ": unknown option '" .. tostring(k) .. "' (known: min_speed, max_speed, volume, pitch, pitch_spread, bodies, max_per_step)", 3)
    end
  end
  local o = { min_speed = opts.min_speed or 0.3, max_speed = opts.max_speed or 8, volume = opts.volume or 1,
    pitch = opts.pitch or 1, pitch_spread = opts.pitch_spread or 0, max_per_step = opts.max_per_step or 4 }
  if not finite(o.min_speed) or o.min_speed < 0 then error(fn .. ": option 'min_speed' must be a speed >= 0 (m/s)", 3) end
  if not finite(o.max_speed) or o.max_speed <= o.min_speed then error(fn .. ": option 'max_speed' must be greater than min_speed", 3) end
  if not finite(o.volume) or o.volume < 0 or o.volume > 1 then error(fn .. ": option 'volume' must be in 0..1", 3) end
  if not finite(o.pitch) or o.pitch < 0.125 or o.pitch > 8 then error(fn .. ": option 'pitch' must be in 0.125..8", 3) end
  if not finite(o.pitch_spread) or o.pitch_spread < 0 or o.pitch_spread > 0.9 then error(fn .. ": option 'pitch_spread' must be in 0..0.9", 3) end
  if math.type(o.max_per_step) ~= "integer" or o.max_per_step < 1 then error(fn .. ": option 'max_per_step' must be an integer >= 1", 3) end
  if opts.bodies ~= nil then
    if type(opts.bodies) ~= "table" then error(fn .. ": option 'bodies' must be a list of bodies", 3) end
    o.bodies = {}
    for k, b in pairs(opts.bodies) do
      if math.type(k) ~= "integer" or k < 1 or k > #opts.bodies then
        error(string.format("%s: option 'bodies' must be a list of bodies: unexpected entry [%s]", fn, type(k) == "string" and ("'" .. k .. "'") or tostring(k)), 3)
      end
      if type(b) ~= "userdata" then error(string.format("%s: option 'bodies'[%d] must be a Body or a Collider (got %s)", fn, k, type(b)), 3) end
      o.bodies[b] = true
    end
  end
  return o
end

-- volume of an impact at `speed`: 0 at min_speed, rising linearly to `volume` at max_speed
local function impact_volume(o, speed)
  if not finite(speed) then return 0 end
  local x = (speed - o.min_speed) / (o.max_speed - o.min_speed)
  return o.volume * math.max(0, math.min(1, x))
end

-- a deterministic pitch variation per impact (a hash of the count of impacts played)
local spread_counter = 0
local function spread(o)
  if o.pitch_spread == 0 then return o.pitch end
  spread_counter = spread_counter + 1
  local u = ((spread_counter * 2654435761) % 4294967296) / 4294967296
  return o.pitch * (1 + o.pitch_spread * (2 * u - 1))
end

-- pan of a world point from where the running scene's camera shows it
local function pan_of(point)
  local r = active.runner
  if not (r and point and r.camera) then return 0 end
  local px = r.camera:project(point, r.input.width, r.input.height)
  if not px then return 0 end
  return math.max(-1, math.min(1, 2 * px / r.input.width - 1)) * 0.8
end

function sound.impact(s, e, opts, ...)
  args.at_most("impetus.sound.impact(sound, e [, opts])", 3, s, e, opts, ...)
  if getmetatable(s) ~= Sound then error("impetus.sound.impact: argument 1 must be a Sound", 2) end
  if type(e) ~= "table" then error("impetus.sound.impact: argument 2 must be a contact event {speed, point, ...}", 2) end
  local o = impact_options(opts, "impetus.sound.impact")
  local v = impact_volume(o, e.speed)
  if v <= 0 then return 0 end
  s:play { volume = v, pitch = spread(o), pan = pan_of(e.point) }
  return v
end

local registrations = setmetatable({}, { __mode = "k" }) -- world -> list of {sound, options}

-- while on, every play does nothing (the history replays the past, which was heard already)
function sound.quiet(on) quiet = on and true or false end

-- the world's impact-sound registrations (made empty when it has none): the history keeps them
function sound.registrations_of(world)
  local list = registrations[world]
  if not list then
    list = {}
    registrations[world] = list
  end
  return list
end

function sound.impacts(world, s, opts, ...)
  args.at_most("impetus.sound.impacts(world, sound [, opts])", 3, world, s, opts, ...)
  if type(world) ~= "userdata" or not pcall(function() return world.contact_events end) then
    error("impetus.sound.impacts: argument 1 must be a World", 2)
  end
  if s == nil then -- emptied in place (the history keeps this table)
    local list = registrations[world]
    if list then for i = #list, 1, -1 do list[i] = nil end end
    return
  end
  if getmetatable(s) ~= Sound then error("impetus.sound.impacts: argument 2 must be a Sound (or nil to remove)", 2) end
  local o = impact_options(opts, "impetus.sound.impacts")
  local list = registrations[world] or {}
  registrations[world] = list
  list[#list + 1] = { sound = s, options = o }
end

-- after each step (the runner calls it): play the loudest impacts of the step's begin and hit events,
-- one per touching pair (the larger of its speeds)
function sound.dispatch(world)
  local list = registrations[world]
  if not list then return end
  local ev = world:contact_events()
  for _, reg in ipairs(list) do
    local o = reg.options
    local pairs_seen, hits = {}, {}
    local function consider(e)
      if o.bodies and not (o.bodies[e.a] or o.bodies[e.b]) then return end
      local v = impact_volume(o, e.speed)
      if v <= 0 then return end
      local ka, kb = tostring(e.a), tostring(e.b)
      local key = ka < kb and ka .. "|" .. kb or kb .. "|" .. ka
      local prev = pairs_seen[key]
      if prev then
        if v > prev.volume then prev.volume, prev.point = v, e.point or prev.point end
      else
        local h = { volume = v, point = e.point or (e.a and e.a.position) }
        pairs_seen[key] = h
        hits[#hits + 1] = h
      end
    end
    for _, e in ipairs(ev.begin) do consider(e) end
    for _, e in ipairs(ev.hit) do consider(e) end
    table.sort(hits, function(x, y) return x.volume > y.volume end)
    for i = 1, math.min(#hits, o.max_per_step) do
      reg.sound:play { volume = hits[i].volume, pitch = spread(o), pan = pan_of(hits[i].point) }
    end
  end
end

sound.Sound = Sound
return sound
