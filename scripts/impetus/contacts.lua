-- impetus.contacts: per-body contact callbacks, the on_contact convenience. Callbacks run after the
-- world's step, never inside it (the runner calls dispatch after each fixed step; a script that steps
-- its own world calls impetus.dispatch_contacts(world) after world:step).
--
--   impetus.on_contact(body, function(self, other, e) ... end)   -- nil removes it
--
-- e = {kind = "begin" | "hit" | "end", speed, impulse, point, normal}: "begin" when the pair starts
-- touching (speed: the approach speed, m/s), "hit" when the impulse mode resolved a collision of the
-- pair (impulse in N s, speed), "end" when it stops touching (impulse: the pair's last normal
-- impulse). normal points towards self. other is a Body or a Collider.
-- Sensors (shapes made with sensor = true): e = {kind = "sensor_begin" | "sensor_end", sensor, shape,
-- other, other_shape} when a shape starts or stops overlapping a sensor; the handler of the sensor's
-- body (or Collider) and the handler of the other body are both called, self being their own side.
local contacts = {}

-- handlers[world][body] = fn. The outer table is weak-keyed (an ephemeron): a world that is no longer
-- used goes away with its handlers, although the handles in them refer to it. The inner tables hold the
-- body handles strongly, so a body keeps its handle (and its handler) while nobody else refers to it.
local handlers = setmetatable({}, { __mode = "k" })

function contacts.on_contact(body, fn, ...)
  require("impetus.args").at_most("impetus.on_contact(body, fn)", 2, body, fn, ...)
  if type(body) ~= "userdata" or not pcall(function() return body.valid end) then error("impetus.on_contact: argument 1 must be a Body", 2) end
  if fn ~= nil and type(fn) ~= "function" then error("impetus.on_contact: argument 2 must be a function or nil", 2) end
  local world = debug.getuservalue(body, 1) -- a handle's first user value is its world
  local hs = handlers[world]
  if not hs then
    if fn == nil then return end
    hs = {}
    handlers[world] = hs
  end
  hs[body] = fn
end

-- the world's handlers, body -> fn (made empty when it has none): the history keeps it with the scene's data
function contacts.handlers_of(world)
  local hs = handlers[world]
  if not hs then
    hs = {}
    handlers[world] = hs
  end
  return hs
end

local function neg(v) return v and { -v[1], -v[2], -v[3] } end

local function fire(hs, kind, e)
  local a, b = e.a, e.b
  local ha, hb = a and hs[a], b and hs[b]
  if not ha and not hb then return end
  if ha and not a:valid() then hs[a], ha = nil, nil end -- destroyed: its handler goes
  if hb and not b:valid() then hs[b], hb = nil, nil end
  if ha then
    ha(a, b, { kind = kind, speed = e.speed, impulse = e.impulse, point = e.point, normal = e.normal })
  end
  if hb and b:valid() then -- (ha may have destroyed it)
    hb(b, a, { kind = kind, speed = e.speed, impulse = e.impulse, point = e.point, normal = neg(e.normal) })
  end
end

-- after a hot reload: replace each handler of the world by map(handler) when that gives its new version;
-- returns the handlers that have none (closures made at run time), for the runner to warn about
function contacts.rebind(world, map)
  local hs = handlers[world]
  local stale = {}
  if not hs then return stale end
  for body, fn in pairs(hs) do
    local new = map(fn)
    if new then hs[body] = new else stale[#stale + 1] = fn end
  end
  return stale
end

local function fire_sensor(hs, kind, e)
  local s, o = e.sensor, e.other
  local hsn, ho = hs[s], hs[o]
  if not hsn and not ho then return end
  if hsn and not s:valid() then hs[s], hsn = nil, nil end
  if ho and not o:valid() then hs[o], ho = nil, nil end
  local ev = { kind = kind, sensor = s, shape = e.shape, other = o, other_shape = e.other_shape }
  if hsn then hsn(s, o, ev) end
  if ho and o:valid() then ho(o, s, { kind = kind, sensor = s, shape = e.shape, other = o, other_shape = e.other_shape }) end
end

-- call the handlers of the last step's events: begin, then hit, then end, then the sensors' begin and end
function contacts.dispatch(world)
  local hs = handlers[world]
  if not hs or next(hs) == nil then return end
  local ev = world:contact_events()
  for _, e in ipairs(ev.begin) do fire(hs, "begin", e) end
  for _, e in ipairs(ev.hit) do fire(hs, "hit", e) end
  for _, e in ipairs(ev["end"]) do fire(hs, "end", e) end
  for _, e in ipairs(ev.sensor_begin) do fire_sensor(hs, "sensor_begin", e) end
  for _, e in ipairs(ev.sensor_end) do fire_sensor(hs, "sensor_end", e) end
end

return contacts
