-- state_hash: the exact-bit hash of a world's state the project compares runs by (tools/state_hash.lua
-- for every scene, --record / --replay for a recorded run, the history's specs).
--
--   state_hash.string(world)   the state as text: every number by its exact bits ("%a")
--   state_hash.hash(world)     FNV-1a (64 bits) of that text, as 16 hex digits
--
-- The state covers what the next step starts from and what a script can read: every particle's
-- position and velocity (and a curve particle's u, u'), every body's state vector x q P L, the
-- touching pairs with their points, depths and the impulses the contact solver kept (its warm
-- start), every constraint's multipliers, time and step count.
local state_hash = {}

-- FNV-1a, 64 bits (Lua integers wrap on overflow, as the algorithm wants)
local function fnv(h, s)
  for i = 1, #s do h = (h ~ s:byte(i)) * 0x100000001b3 end
  return h
end

local function put(buf, x)
  local t = type(x)
  if t == "number" then buf[#buf + 1] = string.format("%a", x)
  elseif t == "table" then for i = 1, #x do put(buf, x[i]) end
  elseif t == "boolean" then buf[#buf + 1] = tostring(x)
  elseif t ~= "nil" then buf[#buf + 1] = tostring(x) end
end

function state_hash.string(world)
  local buf = {}
  put(buf, world.time)
  put(buf, world.steps)
  for _, p in ipairs(world:particles()) do
    put(buf, p.position)
    put(buf, p.velocity)
    if p.on_curve then put(buf, p.u) put(buf, p.udot) end
  end
  put(buf, world:body_state())
  for _, c in ipairs(world:contacts()) do
    put(buf, c.normal)
    put(buf, c.age)
    for _, pt in ipairs(c.points) do
      put(buf, pt.point) put(buf, pt.depth) put(buf, pt.impulse) put(buf, pt.friction)
    end
  end
  for _, c in ipairs(world:constraints()) do put(buf, c.lambda) end
  return table.concat(buf, " ")
end

function state_hash.hash(world)
  return string.format("%016x", fnv(0xcbf29ce484222325, state_hash.string(world)))
end

return state_hash
