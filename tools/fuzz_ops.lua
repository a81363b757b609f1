-- fuzz_ops.lua: the operations of the fuzzer, as Lua source text, drawn from a seeded generator.
--
-- Every function, field and setting of the documented API (README.md's Script API and the
-- registration tables of engine/lua/) has a generator here. An operation is one or a few Lua
-- statements over the globals of tools/fuzz_prelude.lua (W, H, CB, STEP, ARM, ACCEPT_NOT), so the
-- list of operations of a run, written after the prelude, is a standalone script that replays it.
--
-- Values: most are ordinary (so that worlds fill up and move), the rest hostile: NaN, +-inf, -0,
-- 1e308, 1e38, 1e20, denormals, negative and zero sizes and masses, integer edges (+-2^31, 2^32+1,
-- math.mininteger/maxinteger, 2^53), wrong types (strings, tables, booleans, functions, handles of
-- another kind), stale handles (objects destroyed by earlier operations), handles of another world,
-- degenerate hulls and meshes, every contact mode, integrator and broad phase, dt of 0, negative,
-- NaN, tiny and huge, and callbacks that fail, return garbage, change the locked world or collect
-- garbage inside a step.
local M = {}

-- splitmix64 on Lua's 64-bit integers (wrapping arithmetic, logical shifts): the same stream on
-- every machine, independent of math.random
function M.rng(seed)
  local s = seed * 0x2545F4914F6CDD1D + 0x632BE59BD9B4E019
  local r = {}
  function r.u64()
    s = s + 0x9E3779B97F4A7C15
    local z = s
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  function r.int(lo, hi) return lo + (r.u64() >> 1) % (hi - lo + 1) end
  function r.float() return (r.u64() >> 11) * 2.0 ^ -53 end
  function r.chance(p) return r.float() < p end
  function r.pick(t) return t[r.int(1, #t)] end
  function r.range(lo, hi) return lo + (hi - lo) * r.float() end
  return r
end

-- a number as Lua source that reads back to the same value and type
local function lit(x)
  if math.type(x) == "integer" then
    if x == math.mininteger then return "math.mininteger" end
    return string.format("%d", x)
  end
  if x ~= x then return "(0/0)" end
  if x == 1 / 0 then return "(1/0)" elseif x == -1 / 0 then return "(-1/0)" end
  if x == 0 and 1 / x < 0 then return "(-0.0)" end
  local s = string.format("%.17g", x)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s
end
M.lit = lit

local HOSTILE = { "(0/0)", "(1/0)", "(-1/0)", "(-0.0)", "0", "1e308", "-1e308", "1e38", "-1e38", "1e20", "-1e20",
  "5e-324", "1e-300", "-1", "-1e-9", "2^53", "math.mininteger", "math.maxinteger", "2147483647", "-2147483648",
  "2147483648", "4294967297", "1e9", "1e6", "-1e6" }
local WRONG = { '"abc"', '"1.5"', "{}", "true", "print", "nil", "W[1]", '"nan"' }
local INT_HOSTILE = { "0", "-1", "1", "2", "1.5", "(0/0)", "(1/0)", "1e9", "2147483647", "-2147483648", "2147483648",
  "4294967297", "4294967296", "math.mininteger", "math.maxinteger", "2^53", "-(2^31)", "65536", "100000" }

-- hostile with probability ph, a wrong type with probability pw, else uniform in [lo, hi]
local function num(r, lo, hi, ph, pw)
  ph, pw = ph or 0.12, pw or 0.03
  local u = r.float()
  if u < ph then return r.pick(HOSTILE) end
  if u < ph + pw then return r.pick(WRONG) end
  return lit(r.range(lo, hi))
end

local function int(r, lo, hi, ph)
  if r.chance(ph or 0.12) then return r.pick(INT_HOSTILE) end
  if r.chance(0.02) then return r.pick(WRONG) end
  return lit(r.int(lo, hi))
end

local function vec(r, scale, ph)
  scale = scale or 3
  ph = ph or 0.1
  local u = r.float()
  if u < ph then
    local forms = { "{}", "{1, 2}", "{x = 1, y = 2, z = 3}", "{1, 2, 3, 4}", '"abc"', "{{1}, {2}, {3}}", "0",
      "{0, 0, 0}", "{1e308, 1e308, 1e308}", "{-1e308, 1e308, 0}", "{1e20, -1e20, 1e20}", "{1e38, -1e38, 0}",
      "{5e-324, 0, -5e-324}", "{true, 0, 0}", "{'1', '2', '3'}" }
    if r.chance(0.5) then return r.pick(forms) end
    local c = { lit(r.range(-scale, scale)), lit(r.range(-scale, scale)), lit(r.range(-scale, scale)) }
    c[r.int(1, 3)] = r.pick(HOSTILE)
    return "{" .. table.concat(c, ", ") .. "}"
  end
  return string.format("{%s, %s, %s}", lit(r.range(-scale, scale)), lit(r.range(-scale, scale)), lit(r.range(-scale, scale)))
end

local function color(r)
  if r.chance(0.1) then return r.pick { "{}", '"red"', "{2, -1, 0/0}", "{1, 1}", "{1, 1, 1, 1, 1}", "{1e308, 0, 0}" } end
  return string.format("{%s, %s, %s}", lit(r.float()), lit(r.float()), lit(r.float()))
end

local function bool(r) if r.chance(0.05) then return r.pick(WRONG) end return r.chance(0.5) and "true" or "false" end

local function enum(r, valid, pbad)
  if r.chance(pbad or 0.06) then return r.pick { '"bogus"', '""', "1", "{}", "true", '"RK4"' } end
  return string.format("%q", r.pick(valid))
end

local function quat(r)
  if r.chance(0.12) then return r.pick { "{0, 0, 0, 0}", "{1, 0, 0}", "{1e308, 1e308, 0, 0}", "{1e-300, 0, 0, 0}", "{(0/0), 0, 0, 0}", "{}", "'q'" } end
  return string.format("{%s, %s, %s, %s}", lit(r.range(-1, 1)), lit(r.range(-1, 1)), lit(r.range(-1, 1)), lit(r.range(-1, 1)))
end

-- a table constructor from a list of {key, value-source}: each present with probability p; now
-- and then an unknown field
local function def(r, fields, p, required)
  local parts = {}
  for _, f in ipairs(required or {}) do parts[#parts + 1] = f[1] .. " = " .. f[2] end
  for _, f in ipairs(fields) do
    if r.chance(p or 0.5) then parts[#parts + 1] = f[1] .. " = " .. f[2] end
  end
  if r.chance(0.03) then parts[#parts + 1] = "bogus_field = 1" end
  if r.chance(0.01) then parts[#parts + 1] = "[1] = 2" end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- ---- the generator's model of the run: which worlds and handle slots exist ----------------------

function M.context()
  return { worlds = { 1 }, slots = {}, next = {}, nworld = 1 }
end

local KINDS = { "p", "s", "bh", "f", "c", "k", "b", "cl", "hr", "j", "qj" }

local function world(r, ctx)
  return "W[" .. r.pick(ctx.worlds) .. "]"
end

-- a new slot of `kind` in world index wi: its source and the function that records it if made
local function new_slot(ctx, kind, wi)
  ctx.next[kind] = (ctx.next[kind] or 0) + 1
  local k = ctx.next[kind]
  return string.format("H.%s[%d]", kind, k), function()
    if H[kind][k] ~= nil then
      ctx.slots[kind] = ctx.slots[kind] or {}
      table.insert(ctx.slots[kind], { k = k, w = wi })
    end
  end
end

local function count(ctx, kind) return ctx.slots[kind] and #ctx.slots[kind] or 0 end

-- a handle of `kind` (usually of world wi, maybe stale, now and then of another world or kind)
local function handle(r, ctx, kind, wi)
  local list = ctx.slots[kind]
  if r.chance(0.02) then
    local other = r.pick(KINDS)
    if count(ctx, other) > 0 and other ~= "qj" then list, kind = ctx.slots[other], other end
  end
  if not list or #list == 0 then return r.pick { "nil", "{}", '"handle"', "W[1]" } end
  local same = {}
  if wi and not r.chance(0.05) then
    for _, e in ipairs(list) do if e.w == wi then same[#same + 1] = e end end
  end
  local e = r.pick(#same > 0 and same or list)
  return string.format("H.%s[%d]", kind, e.k)
end

local function wpick(r, ctx)
  local wi = r.pick(ctx.worlds)
  return wi, "W[" .. wi .. "]"
end

-- ---- operations ---------------------------------------------------------------------------------

local INTEGRATORS = { "euler", "midpoint", "rk4", "adaptive", "implicit" }
local CB_KINDS = { "ok", "ok", "ok", "ok", "garbage", "fail", "errobj", "locked", "gc" }

local function callback(r)
  if r.chance(0.04) then return r.pick { "1", '"f"', "{}", "true" } end
  return string.format("CB(%q, %d)", r.pick(CB_KINDS), r.int(1, 30))
end

local ops = {}

-- world settings, valid and not
local SETTINGS = {
  gravity = function(r) return vec(r, 15) end,
  drag = function(r) return num(r, 0, 1) end,
  integrator = function(r) return enum(r, INTEGRATORS) end,
  tolerance = function(r) return num(r, 1e-8, 1e-2) end,
  contact = function(r) return enum(r, { "impulse", "qp", "none" }) end,
  planar = function(r) return bool(r) end,
  sleeping = function(r) return bool(r) end,
  velocity_iterations = function(r) return int(r, 1, 20) end,
  position_iterations = function(r) return int(r, 0, 10) end,
  constraint_ks = function(r) return num(r, 0, 200) end,
  constraint_kd = function(r) return num(r, 0, 50) end,
  constraint_tolerance = function(r) return num(r, 1e-12, 1e-3) end,
  constraint_max_iterations = function(r) return int(r, 0, 50) end,
  constraint_preconditioner = function(r) return enum(r, { "ic", "jacobi", "none" }) end,
  broadphase = function(r) return enum(r, { "sap", "grid", "sweep" }) end,
  cg_tolerance = function(r) return num(r, 1e-4, 0.1) end,
  cg_max_iterations = function(r) return int(r, 1, 300) end,
  jacobian = function(r) return enum(r, { "definite", "full" }) end,
  restitution = function(r) return num(r, 0, 1) end,
  friction = function(r) return num(r, 0, 2) end,
  qp_dense_max = function(r) return int(r, 0, 300) end,
  particle_collisions = function(r) return bool(r) end,
  pre_solve = function(r) return r.chance(0.2) and "nil" or callback(r) end,
  -- read-only: setting them must raise
  time = function(r) return num(r, 0, 1) end,
  steps = function(r) return int(r, 0, 10) end,
  body_count = function() return "3" end,
  joint_hubs = function() return "{}" end,
  locked = function() return "true" end,
}
local SETTING_NAMES = {}
for k in pairs(SETTINGS) do SETTING_NAMES[#SETTING_NAMES + 1] = k end
table.sort(SETTING_NAMES)

ops[#ops + 1] = { w = 10, name = "world setting", gen = function(r, ctx)
  local _, w = wpick(r, ctx)
  local key = r.pick(SETTING_NAMES)
  return string.format("%s.%s = %s", w, key, SETTINGS[key](r))
end }

local WORLD_READS = { "time", "steps", "gravity", "drag", "integrator", "tolerance", "contact", "planar", "sleeping",
  "joint_hubs", "velocity_iterations", "position_iterations", "constraint_ks", "constraint_kd", "constraint_tolerance",
  "constraint_max_iterations", "constraint_preconditioner", "broadphase", "body_count", "manifold_count",
  "particle_count", "spring_count", "contact_count", "constraint_count", "locked", "cg_tolerance", "cg_max_iterations",
  "jacobian", "restitution", "friction", "qp_dense_max", "particle_collisions", "pre_solve", "no_such_field" }

local WORLD_QUERIES = { "bodies", "particles", "constraints", "contacts", "contact_events", "pairs", "profile",
  "kinetic_energy", "potential_energy", "energy", "body_state", "constraint_error", "contact_stats",
  "contact_separations", "solve_contacts", "contact_system", "solve_constraints", "collide", "broken_joints" }

ops[#ops + 1] = { w = 6, name = "world read", gen = function(r, ctx)
  local _, w = wpick(r, ctx)
  if r.chance(0.4) then return string.format("local _ = %s.%s", w, r.pick(WORLD_READS)) end
  return string.format("%s:%s()", w, r.pick(WORLD_QUERIES))
end }

ops[#ops + 1] = { w = 5, name = "world query", gen = function(r, ctx)
  local _, w = wpick(r, ctx)
  local c = r.int(1, 11)
  if c == 1 then
    local opts = r.chance(0.5) and "" or ", " .. def(r, { { "all", bool(r) }, { "group", int(r, 0, 7) }, { "mask", int(r, 0, 255) },
      { "sensors", bool(r) } }, 0.5)
    return string.format("%s:raycast(%s, %s%s)", w, vec(r, 10), vec(r, 10), opts)
  end
  if c == 9 then -- a shape cast
    local shape = def(r, { { "radius", num(r, 0, 1) }, { "length", num(r, 0, 1) }, { "size", vec(r, 1) },
      { "points", r.chance(0.7) and "{{0,0,0},{0.5,0,0},{0,0.5,0},{0,0,0.5}}" or r.pick { "{}", "{{0,0,0}}", "{1, 2}" } } }, 0.6,
      { { "type", enum(r, { "sphere", "capsule", "box", "hull" }, 0.1) } })
    local filter = r.chance(0.5) and "" or ", " .. def(r, { { "group", int(r, 0, 7) }, { "mask", int(r, 0, 255) }, { "sensors", bool(r) } }, 0.5)
    return string.format("%s:cast(%s, %s, %s%s%s)", w, shape, vec(r, 6), vec(r, 6), (filter ~= "" or r.chance(0.5)) and ", " .. quat(r) or "", filter)
  end
  if c == 10 then -- what a sensor holds (a sensor collider or a body's sensor shape, or not a sensor)
    local kind = r.chance(0.5) and "c" or "b"
    return string.format("%s:overlaps(%s%s)", w, handle(r, ctx, kind), r.chance(0.3) and ", " .. int(r, 1, 3, 0.3) or "")
  end
  if c == 11 then -- a pre_solve that rewrites the contacts, with values good and bad, or fails when armed
    return string.format("%s.pre_solve = PRESOLVE(%d, %s, %s, %s, %s)", w, r.int(1, 30), bool(r), num(r, 0, 1), num(r, 0, 1), vec(r, 3))
  end
  if c == 2 then return string.format("%s:query_point(%s)", w, vec(r, 5)) end
  if c == 3 then
    local shape = def(r, { { "type", enum(r, { "sphere", "capsule", "box", "hull" }, 0.1) }, { "radius", num(r, 0, 2) },
      { "length", num(r, 0, 2) }, { "size", vec(r, 2) }, { "half", vec(r, 1) },
      { "points", r.chance(0.5) and "{{0,0,0},{1,0,0},{0,1,0},{0,0,1}}" or r.pick { "{}", "{{0,0,0}}", "{{1,1,1},{1,1,1},{1,1,1},{1,1,1}}", "{1, 2}" } } }, 0.6)
    return string.format("%s:overlap(%s, %s%s)", w, shape, vec(r, 5), r.chance(0.5) and ", " .. quat(r) or "")
  end
  if c == 4 then return string.format("%s:jacobian_check(%s)", w, r.chance(0.5) and "" or num(r, 1e-8, 1e-4)) end
  if c == 5 then return string.format("%s:resolve_collisions(%s)", w, r.chance(0.5) and "" or num(r, 0, 1)) end
  if c == 6 then
    local n = r.int(0, 6)
    local f = {}
    for i = 1, n do f[i] = num(r, -10, 10) end
    return string.format("%s:contact_system() %s:contact_accelerations({%s})", w, w, table.concat(f, ", "))
  end
  if c == 7 then
    return string.format("%s:set_body_state(MUT(%s:body_state(), %s, %s))", w, w, int(r, 1, 40, 0.2), num(r, -5, 5, 0.5))
  end
  return string.format("local _ = tostring(%s)", w)
end }

local DT_HOSTILE = { "0", "-1/60", "(0/0)", "(1/0)", "1e308", "1e-300", "5e-324", '"abc"', "nil", "1e6", "-0.0", "2^-1074" }
ops[#ops + 1] = { w = 16, name = "step", gen = function(r, ctx)
  local _, w = wpick(r, ctx)
  local dt
  if r.chance(0.06) then dt = r.pick(DT_HOSTILE)
  else dt = r.pick { "1/60", "1/60", "1/60", "1/240", "1e-3", "0.05", "1/30" } end
  local n = r.chance(0.3) and r.int(2, 20) or 1
  if n == 1 then return string.format("STEP(%s, %s)", w, dt) end
  return string.format("for _ = 1, %d do STEP(%s, %s) end", n, w, dt)
end }

ops[#ops + 1] = { w = 2, name = "new world", gen = function(r, ctx)
  if #ctx.worlds >= 3 then return "collectgarbage()" end
  ctx.nworld = ctx.nworld + 1
  local k = ctx.nworld
  local src = string.format("W[%d] = impetus.world%s", k, r.chance(0.2) and "()" or def(r, {
    { "gravity", vec(r, 15) }, { "drag", num(r, 0, 1) }, { "integrator", enum(r, INTEGRATORS) }, { "tolerance", num(r, 1e-8, 1e-2) } }))
  return src, function() if W[k] then table.insert(ctx.worlds, k) end end
end }

ops[#ops + 1] = { w = 0.5, name = "drop world", gen = function(r, ctx)
  if #ctx.worlds < 2 then return "collectgarbage()" end
  local i = r.int(2, #ctx.worlds)
  local k = table.remove(ctx.worlds, i)
  for _, kind in ipairs(KINDS) do -- its handles stay in H (and keep the world alive) but are no longer drawn
    local keep = {}
    for _, e in ipairs(ctx.slots[kind] or {}) do if e.w ~= k then keep[#keep + 1] = e end end
    ctx.slots[kind] = keep
  end
  return string.format("W[%d] = nil collectgarbage()", k)
end }

ops[#ops + 1] = { w = 2, name = "arm / gc", gen = function(r)
  if r.chance(0.7) then return string.format("ARM(%d)", r.int(1, 40)) end
  return "collectgarbage()"
end }

-- particles, springs, behaviours, fields, colliders
ops[#ops + 1] = { w = 8, name = "particle", gen = function(r, ctx)
  if count(ctx, "p") > 250 then return "collectgarbage()" end
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "p", wi)
  return string.format("%s = %s:particle%s", slot, w, def(r, { { "position", vec(r, 3) }, { "velocity", vec(r, 3) },
    { "mass", num(r, 0.01, 5) }, { "radius", num(r, 0.01, 0.5) }, { "fixed", bool(r) }, { "kinematic", bool(r) },
    { "color", color(r) }, { "restitution", num(r, 0, 1) }, { "friction", num(r, 0, 1) } }, 0.5)), post
end }

ops[#ops + 1] = { w = 4, name = "spring", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "s", wi)
  local b = r.chance(0.25) and vec(r, 3) or handle(r, ctx, "p", wi)
  local opts = r.chance(0.2) and "" or ", " .. def(r, { { "ks", num(r, 0, 500) }, { "kd", num(r, 0, 5) }, { "rest", num(r, 0, 2) } })
  return string.format("%s = %s:spring(%s, %s%s)", slot, w, handle(r, ctx, "p", wi), b, opts), post
end }

ops[#ops + 1] = { w = 3, name = "behavior", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "bh", wi)
  local kind = r.pick { "distance", "coincide", "anchor", "plane", "function", "function" }
  local n = ({ distance = 2, coincide = 2, anchor = 1, plane = 1, ["function"] = r.int(1, 4) })[kind]
  if r.chance(0.08) then n = r.pick { 0, 1, 3, 9, 40 } end
  local ps = {}
  for i = 1, n do ps[i] = handle(r, ctx, "p", wi) end
  local fields = { { "ks", num(r, 0, 200) }, { "kd", num(r, 0, 5) }, { "rest", num(r, 0, 2) }, { "point", vec(r, 3) },
    { "normal", vec(r, 1) }, { "offset", num(r, -2, 2) } }
  local required = { { "kind", enum(r, { kind }, 0.05) }, { "particles", "{" .. table.concat(ps, ", ") .. "}" } }
  if kind == "function" then required[3] = { "fn", callback(r) } end
  local d = def(r, fields, 0.4, required)
  return string.format("%s = %s:behavior%s", slot, w, d), post
end }

ops[#ops + 1] = { w = 2, name = "field", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "f", wi)
  return string.format("%s = %s:field(%s)", slot, w, callback(r)), post
end }

ops[#ops + 1] = { w = 3, name = "collider", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "c", wi)
  local c = r.int(1, 3)
  local mat = { { "restitution", num(r, 0, 1) }, { "friction", num(r, 0, 1) }, { "sensor", r.chance(0.3) and bool(r) or "false" },
    { "pre_solve", bool(r) } }
  local fields
  if c == 1 then
    fields = { { "point", vec(r, 2) }, { "normal", r.chance(0.7) and "{0, 1, 0}" or vec(r, 1, 0.3) }, mat[1], mat[2], mat[4] }
    return string.format("%s = %s:plane%s", slot, w, def(r, fields)), post
  elseif c == 2 then
    fields = { { "position", vec(r, 4) }, { "radius", num(r, 0.1, 2) }, mat[1], mat[2], mat[3], mat[4] }
    local d = def(r, fields, 0.5, { { "static", "true" } })
    return string.format("%s = %s:sphere%s", slot, w, d), post
  end
  fields = { { "position", vec(r, 4) }, { "size", vec(r, 2) }, { "half", vec(r, 1) }, { "axis", vec(r, 1) },
    { "angle", num(r, -3, 3) }, mat[1], mat[2], mat[3], mat[4] }
  local d = def(r, fields, 0.5, { { "static", "true" } })
  return string.format("%s = %s:box%s", slot, w, d), post
end }

-- rigid bodies
local function body_fields(r, ctx, wi)
  return {
    { "position", vec(r, 4) }, { "orientation", quat(r) }, { "axis", vec(r, 1) }, { "angle", num(r, -3, 3) },
    { "velocity", vec(r, 5) }, { "angular_velocity", vec(r, 5) }, { "static", bool(r) }, { "kinematic", bool(r) },
    { "mass", num(r, 0.1, 10) }, { "density", num(r, 10, 3000) }, { "color", color(r) },
    { "friction", num(r, 0, 1) }, { "static_friction", num(r, 0, 1) }, { "restitution", num(r, 0, 1) },
    { "bullet", bool(r) }, { "linear_damping", num(r, 0, 2) }, { "angular_damping", num(r, 0, 2) },
    { "group", int(r, 0, 7) }, { "mask", int(r, 0, 255) }, { "gravity_scale", num(r, -2, 3) },
    { "sensor", r.chance(0.3) and bool(r) or "false" }, { "pre_solve", bool(r) },
  }
end

local function hull_points(r)
  local c = r.int(1, 10)
  if c <= 6 then
    local pts = {}
    for i = 1, r.int(4, 14) do pts[i] = vec(r, 0.6, 0.03) end
    return "{" .. table.concat(pts, ", ") .. "}"
  end
  return r.pick {
    "{}", "{{0,0,0}}", "{{0,0,0},{1,0,0}}", "{{0,0,0},{1,0,0},{2,0,0},{3,0,0}}", -- too few, collinear
    "{{0,0,0},{1,0,0},{0,1,0},{1,1,0},{0.5,0.5,0}}",                                 -- coplanar
    "{{1,1,1},{1,1,1},{1,1,1},{1,1,1},{1,1,1}}",                                     -- one point
    "{{0,0,0},{1e-12,0,0},{0,1e-12,0},{0,0,1e-12}}",                                 -- tiny
    "{{0,0,0},{1e20,0,0},{0,1e20,0},{0,0,1e20}}", "{{0,0,0},{1e300,0,0},{0,1e300,0},{0,0,1e300}}",
    "{{0,0,0},{1,0,0},{0,1,0},{0,0,1},{1e-9,1e-9,1e-9}}", "{1, 2, 3}", "{{'a', 0, 0}}",
  }
end

local function mesh_def(r)
  -- a small grid of n x n vertices, two triangles per cell
  local n = r.int(2, 4)
  local v, t = {}, {}
  local s = r.chance(0.05) and r.pick { 1e20, 1e-300, 1e300 } or r.range(0.5, 4)
  for i = 0, n - 1 do for j = 0, n - 1 do v[#v + 1] = string.format("{%s, %s, %s}", lit((i - n / 2) * s), lit(r.chance(0.1) and r.range(-0.5, 0.5) or 0), lit((j - n / 2) * s)) end end
  local nv = #v
  local bad
  for i = 0, n - 2 do
    for j = 0, n - 2 do
      local a, b, c, d = i * n + j + 1, i * n + j + 2, (i + 1) * n + j + 1, (i + 1) * n + j + 2
      t[#t + 1] = { a, b, c }
      t[#t + 1] = { b, d, c }
    end
  end
  local tri = {}
  for k, e in ipairs(t) do tri[k] = { lit(e[1]), lit(e[2]), lit(e[3]) } end
  local u = r.float()
  if u < 0.15 then -- an index outside 1..#vertices: must be refused
    local e = tri[r.int(1, #tri)]
    local idx = r.pick { "0", "-1", lit(nv + 1), "4294967297", "4294967296", "2147483648", "-2147483648", "math.mininteger", "math.maxinteger", "2^32 + 1", "1e10" }
    e[r.int(1, 3)] = idx
    bad = "mesh triangle index out of range: " .. idx .. " of " .. nv .. " vertices"
  elseif u < 0.22 then
    local e = tri[r.int(1, #tri)]
    e[r.int(1, 3)] = r.pick { "1.5", '"1"', "(0/0)", "{}" }
  elseif u < 0.27 then
    local e = tri[r.int(1, #tri)]
    e[2] = e[1] -- a degenerate triangle
  end
  local ts = {}
  for k, e in ipairs(tri) do ts[k] = "{" .. table.concat(e, ", ") .. "}" end
  local verts, tris = "{" .. table.concat(v, ", ") .. "}", "{" .. table.concat(ts, ", ") .. "}"
  if r.chance(0.04) then verts = r.pick { "{}", "{{0,0,0}}", '"v"' } bad = nil end
  if r.chance(0.04) then tris = r.pick { "{}", "{{1,2}}", "{{1,2,3,4}}", "{1,2,3}" } bad = nil end
  return verts, tris, bad
end

ops[#ops + 1] = { w = 9, name = "body", gen = function(r, ctx)
  if count(ctx, "b") > 120 then return "collectgarbage()" end
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "b", wi)
  local fields = body_fields(r, ctx, wi)
  local c = r.int(1, 12)
  local ctor, extra
  if c <= 3 then ctor, extra = "sphere", { { "radius", num(r, 0.05, 1) } }
  elseif c <= 6 then ctor, extra = "box", { { "size", vec(r, 1.5) }, { "half", vec(r, 1) } }
  elseif c <= 7 then ctor, extra = "capsule", { { "radius", num(r, 0.05, 0.5) }, { "length", num(r, 0, 2) } }
  elseif c <= 9 then ctor, extra = "hull", { { "points", hull_points(r) } }
  elseif c <= 10 then
    local verts, tris, bad = mesh_def(r)
    local d = def(r, { { "position", vec(r, 4) }, { "orientation", quat(r) }, { "color", color(r) }, { "group", int(r, 0, 7) },
      { "mask", int(r, 0, 255) }, { "static", bool(r) } }, 0.3, { { "vertices", verts }, { "triangles", tris } })
    local call = string.format("%s = %s:mesh%s", slot, w, d)
    if bad then call = string.format("ACCEPT_NOT(%q, function() %s end)", bad, call) end
    return call, post
  else
    local shapes = {}
    for i = 1, (r.chance(0.03) and r.pick { 0, 5000 } or r.int(1, 4)) do
      if i > 6 then shapes[#shapes + 1] = "{type = 'sphere'}" else
        local t = r.pick { "sphere", "capsule", "box", "box", "hull", "mesh", "plane" }
        local sf = { { "position", vec(r, 1) }, { "orientation", quat(r) }, { "density", num(r, 10, 3000) },
          { "friction", num(r, 0, 1) }, { "restitution", num(r, 0, 1) }, { "sensor", r.chance(0.3) and bool(r) or "false" },
          { "pre_solve", bool(r) } }
        if t == "sphere" or t == "capsule" then sf[#sf + 1] = { "radius", num(r, 0.05, 0.5) } end
        if t == "capsule" then sf[#sf + 1] = { "length", num(r, 0, 1) } end
        if t == "box" then sf[#sf + 1] = { "size", vec(r, 1) } end
        if t == "hull" then sf[#sf + 1] = { "points", hull_points(r) } end
        if t == "plane" then sf[#sf + 1] = { "normal", vec(r, 1) } sf[#sf + 1] = { "point", vec(r, 1) } end
        if t == "mesh" then
          local verts, tris = mesh_def(r)
          sf[#sf + 1] = { "vertices", verts } sf[#sf + 1] = { "triangles", tris }
        end
        local d = def(r, sf, 0.5, { { "type", r.chance(0.03) and '"cone"' or string.format("%q", t) } })
        shapes[#shapes + 1] = d
      end
    end
    ctor, extra = "body", { { "shapes", "{" .. table.concat(shapes, ", ") .. "}" } }
  end
  local all = {}
  for _, f in ipairs(fields) do all[#all + 1] = f end
  local e = {}
  for _, f in ipairs(extra) do if r.chance(ctor == "body" and 1 or 0.8) then e[#e + 1] = f end end
  local d = def(r, all, 0.25, e)
  return string.format("%s = %s:%s%s", slot, w, ctor, d), post
end }

-- cloth and hair
ops[#ops + 1] = { w = 2, name = "cloth", gen = function(r, ctx)
  if count(ctx, "cl") > 6 then return "collectgarbage()" end
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "cl", wi)
  local common = { { "mass", num(r, 0.05, 1) }, { "stretch", num(r, 10, 3000) }, { "shear", num(r, 0, 100) },
    { "bend", num(r, 0, 1e-2) }, { "damping", num(r, 0, 0.1) }, { "radius", num(r, 0.001, 0.05) },
    { "color", color(r) }, { "back_color", color(r) }, { "restitution", num(r, 0, 1) }, { "friction", num(r, 0, 1) },
    { "self_collision", bool(r) } }
  if r.chance(0.7) then
    local f = { { "rows", int(r, 2, 8, 0.15) }, { "cols", int(r, 2, 8, 0.15) }, { "size", r.chance(0.5) and num(r, 0.2, 2) or vec(r, 2) },
      { "position", vec(r, 3) }, { "normal", vec(r, 1) },
      { "pin", r.chance(0.8) and enum(r, { "top", "top_corners", "corners", "left", "none" }) or r.pick { "{{1, 1}}", "{{0, 0}}", "{{1e9, 2}}", "{{-1, 1}}", "{{2147483648, 1}}", "{1}" } } }
    for _, c in ipairs(common) do f[#f + 1] = c end
    return string.format("%s = %s:cloth%s", slot, w, def(r, f, 0.5)), post
  end
  local verts, tris, bad = mesh_def(r)
  local f = { { "pin", r.pick { "{1}", "{}", "{0}", "{1e9}", "{4294967297}", "{-1}" } } }
  for _, c in ipairs(common) do f[#f + 1] = c end
  local d = def(r, f, 0.5, { { "vertices", verts }, { "triangles", tris } })
  local call = string.format("%s = %s:cloth%s", slot, w, d)
  if bad then call = string.format("ACCEPT_NOT(%q, function() %s end)", "cloth " .. bad, call) end
  return call, post
end }

ops[#ops + 1] = { w = 2, name = "hair", gen = function(r, ctx)
  if count(ctx, "hr") > 8 then return "collectgarbage()" end
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "hr", wi)
  local f = { { "root", vec(r, 3) }, { "direction", vec(r, 1) }, { "length", num(r, 0.05, 1) }, { "segments", int(r, 1, 12, 0.15) },
    { "mass", num(r, 0.001, 0.1) }, { "stretch", num(r, 1, 100) }, { "bend", num(r, 0, 1e-3) }, { "damping", num(r, 0, 0.1) },
    { "radius", num(r, 0.001, 0.01) }, { "root_motion", enum(r, { "fixed", "kinematic", "free" }) }, { "clamped", bool(r) },
    { "color", color(r) } }
  if r.chance(0.15) then f[#f + 1] = { "points", r.pick { "{{0,0,0},{0,-0.1,0},{0,-0.2,0}}", "{}", "{{0,0,0}}", "{{0,0,0},{0,0,0},{0,0,0}}", "{{0,0,0},{1e308,0,0}}" } } end
  return string.format("%s = %s:hair%s", slot, w, def(r, f, 0.5)), post
end }

-- tinkertoy constraints and curve particles
ops[#ops + 1] = { w = 5, name = "constraint", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  local slot, post = new_slot(ctx, "k", wi)
  local p = handle(r, ctx, "p", wi)
  local c = r.int(1, 7)
  if c == 1 then return string.format("%s = %s:rod(%s, %s%s)", slot, w, p, handle(r, ctx, "p", wi), r.chance(0.4) and ", " .. def(r, { { "length", num(r, 0, 2) }, { "color", color(r) } }) or ""), post end
  if c == 2 then return string.format("%s = %s:pin(%s%s)", slot, w, p, r.chance(0.5) and ", " .. vec(r, 3) or ""), post end
  if c == 3 then return string.format("%s = %s:wire(%s, %s)", slot, w, p, def(r, { { "center", vec(r, 2) }, { "radius", num(r, 0, 2) }, { "normal", vec(r, 1) }, { "color", color(r) } })), post end
  if c == 4 then return string.format("%s = %s:on_plane(%s, %s)", slot, w, p, def(r, { { "normal", vec(r, 1) }, { "point", vec(r, 2) }, { "color", color(r) } })), post end
  if c == 5 then return string.format("%s = %s:on_line(%s, %s)", slot, w, p, def(r, { { "direction", vec(r, 1) }, { "point", vec(r, 2) }, { "color", color(r) } })), post end
  if c == 6 then
    local n = r.chance(0.1) and r.pick { 0, 9, 12 } or r.int(1, 3)
    local ps = {}
    for i = 1, n do ps[i] = handle(r, ctx, "p", wi) end
    return string.format("%s = %s:constraint{particles = {%s}, C = %s%s}", slot, w, table.concat(ps, ", "), callback(r),
      r.chance(0.2) and ", color = " .. color(r) or ""), post
  end
  local slotp, postp = new_slot(ctx, "p", wi)
  local d = def(r, { { "u", num(r, -2, 2) }, { "udot", num(r, -2, 2) },
    { "range", r.pick { "{-1, 1}", "{1, -1}", "{0/0, 1}", "{}", "{-1e308, 1e308}" } }, { "mass", num(r, 0.1, 2) }, { "radius", num(r, 0.01, 0.2) } },
    0.5, { { "curve", callback(r) } })
  return string.format("%s = %s:curve_particle%s", slotp, w, d), postp
end }

-- joints of the impulse mode and of the QP mode
ops[#ops + 1] = { w = 5, name = "joint", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  if r.chance(0.25) then -- between two points: distance, rope, spring
    local slot, post = new_slot(ctx, "j", wi)
    local t = r.pick { "distance", "rope", "spring" }
    local f = { { "b", r.chance(0.3) and "nil" or handle(r, ctx, "b", wi) }, { "length", num(r, 0, 3) },
      { "min_length", num(r, 0, 1) }, { "max_length", num(r, 0.5, 3) }, { "stiffness", num(r, 0, 500) }, { "damping", num(r, 0, 20) },
      { "rest_length", num(r, 0, 2) }, { "break_force", num(r, 0, 200) }, { "break_torque", num(r, 0, 200) } }
    local d = def(r, f, 0.4, { { "type", enum(r, { t }, 0.04) }, { "a", handle(r, ctx, "b", wi) }, { "anchor", vec(r, 3) },
      { "anchor_b", vec(r, 3) } })
    return string.format("%s = %s:joint%s", slot, w, d), post
  end
  if r.chance(0.7) then
    local slot, post = new_slot(ctx, "j", wi)
    local t = r.pick { "point", "hinge", "twist", "rigid", "prismatic", "planar" }
    local f = { { "b", r.chance(0.3) and "nil" or handle(r, ctx, "b", wi) }, { "axis", vec(r, 1) },
      { "limits", r.pick { "{-0.5, 0.5}", "{swing = 0.4}", "{1, -1}", "{0/0, 1}", "{}", "{-1e308, 1e308}", "{swing = -1}", "7" } },
      { "motor", r.pick { "{speed = 1, max = 10}", "{speed = 0/0, max = 1}", "{speed = 1, max = -1}", "{speed = 1e308, max = 1e308}", "{}", "true",
        "{velocity = {0, 2, 0}, max = 5}", "{velocity = {0/0, 0, 0}, max = 1}", "{velocity = {1e9, 0, 0}, max = 1e308}" } },
      { "break_force", num(r, 0, 200) }, { "break_torque", num(r, 0, 200) } }
    if t == "point" and r.chance(0.3) then
      f[3] = { "limits", r.pick { "{twist = {-0.5, 0.3}}", "{swing = 0.4, twist = {-0.2, 0.2}}", "{twist = {1, -1}}", "{twist = 1}" } }
    end
    local d = def(r, f, 0.5, { { "type", enum(r, { t }, 0.04) }, { "a", handle(r, ctx, "b", wi) }, { "anchor", vec(r, 3) } })
    if (t == "hinge" or t == "prismatic" or t == "planar") and not d:find("axis =", 1, true) then d = d:gsub("}$", ", axis = " .. vec(r, 1) .. "}") end
    return string.format("%s = %s:joint%s", slot, w, d), post
  end
  if r.chance(0.3) then
    local idx = r.chance(0.5) and int(r, 1, 6, 0.6) or lit(r.int(1, 6))
    return string.format("%s:remove_joint(%s%s)", w, idx, r.chance(0.3) and ", true" or "")
  end
  local slot, post = new_slot(ctx, "qj", wi)
  return string.format("%s = %s:joint{a = %s%s, point = %s%s}", slot, w, handle(r, ctx, "b", wi),
    r.chance(0.5) and ", b = " .. handle(r, ctx, "b", wi) or "", vec(r, 3), r.chance(0.2) and ", fixed = " .. bool(r) or ""), post
end }

-- particles sewn to body points (a cloth's or a free particle), now and then to the wrong thing
ops[#ops + 1] = { w = 2, name = "attach", gen = function(r, ctx)
  local kinds = {}
  if count(ctx, "p") > 0 then kinds[#kinds + 1] = "p" end
  if count(ctx, "cl") > 0 then kinds[#kinds + 1] = "cl" end
  if #kinds == 0 then return "collectgarbage()" end
  local kind = r.pick(kinds)
  local wi = r.pick(ctx.worlds)
  local p = kind == "p" and handle(r, ctx, "p", wi)
    or string.format("%s:particle(%s, %s)", handle(r, ctx, "cl", wi), int(r, 1, 4, 0.2), int(r, 1, 4, 0.2))
  local body = r.chance(0.92) and handle(r, ctx, "b", wi) or r.pick { "W[1]", "nil", "{}", handle(r, ctx, "c", wi) }
  return string.format("(%s):attach(%s%s)", p, body, r.chance(0.6) and ", " .. vec(r, 3) or "")
end }

-- handle operations: fields and methods of every type
local HANDLE_OPS = {
  p = { set = { position = function(r) return vec(r, 3) end, velocity = function(r) return vec(r, 3) end, mass = function(r) return num(r, 0.01, 5) end,
    radius = function(r) return num(r, 0.01, 0.5) end, fixed = bool, kinematic = bool, color = color,
    u = function(r) return num(r, -2, 2) end, udot = function(r) return num(r, -2, 2) end, id = function() return "1" end,
    restitution = function(r) return num(r, 0, 1) end, friction = function(r) return num(r, 0, 1) end },
    get = { "position", "velocity", "mass", "radius", "fixed", "kinematic", "color", "id", "data", "u", "udot", "on_curve",
      "restitution", "friction", "attached" },
    call = { function(r) return string.format(":move_to(%s, %s)", vec(r, 3), num(r, 1 / 240, 1 / 30)) end,
      function() return ":detach()" end, function() return ":attachment()" end } },
  s = { set = { ks = function(r) return num(r, 0, 500) end, kd = function(r) return num(r, 0, 5) end, rest = function(r) return num(r, 0, 2) end,
    anchor = function(r) return vec(r, 3) end }, get = { "ks", "kd", "rest", "anchor", "a", "b" }, call = {} },
  bh = { set = {}, get = {}, call = {} },
  f = { set = {}, get = {}, call = {} },
  c = { set = { position = function(r) return vec(r, 4) end, restitution = function(r) return num(r, 0, 1) end, friction = function(r) return num(r, 0, 1) end },
    get = { "shape", "position", "normal", "radius", "half", "restitution", "friction" }, call = {} },
  k = { set = { length = function(r) return num(r, 0, 2) end, point = function(r) return vec(r, 3) end, color = color },
    get = { "kind", "particles", "rows", "lambda", "value", "force", "forces", "length", "point", "center", "radius", "normal", "direction", "color" }, call = {} },
  b = { set = { position = function(r) return vec(r, 4) end, orientation = quat, velocity = function(r) return vec(r, 5) end,
    angular_velocity = function(r) return vec(r, 5) end, mass = function(r) return num(r, 0.1, 10) end, static = bool, kinematic = bool,
    group = function(r) return int(r, 0, 7) end, mask = function(r) return int(r, 0, 255) end, color = color,
    friction = function(r) return num(r, 0, 1) end, static_friction = function(r) return num(r, 0, 1) end,
    restitution = function(r) return num(r, 0, 1) end, bullet = bool, linear_damping = function(r) return num(r, 0, 2) end,
    angular_damping = function(r) return num(r, 0, 2) end, center_of_mass = function(r) return vec(r, 1) end,
    gravity_scale = function(r) return num(r, -2, 3) end },
    get = { "position", "orientation", "velocity", "angular_velocity", "center_of_mass", "rotation", "momentum", "angular_momentum",
      "mass", "inertia", "inertia_body", "force", "torque", "static", "kinematic", "friction", "static_friction", "restitution",
      "bullet", "linear_damping", "angular_damping", "asleep", "group", "mask", "color", "id", "data", "shape_count", "gravity_scale" },
    call = { function(r) return string.format(":apply_force(%s%s)", vec(r, 50), r.chance(0.5) and ", " .. vec(r, 3) or "") end,
      function(r) return string.format(":apply_torque(%s)", vec(r, 20)) end,
      function(r) return string.format(":apply_impulse(%s%s)", vec(r, 10), r.chance(0.5) and ", " .. vec(r, 3) or "") end,
      function(r) return string.format(":move_to(%s, %s)", vec(r, 3), num(r, 1 / 240, 1 / 30)) end,
      function() return ":kinetic_energy()" end, function() return ":aabb()" end, function() return ":shapes()" end,
      function() return ":wake()" end } },
  cl = { set = { stretch = function(r) return num(r, 0, 3000) end, shear = function(r) return num(r, 0, 100) end, bend = function(r) return num(r, 0, 1e-2) end,
    damping = function(r) return num(r, 0, 0.1) end, color = color, back_color = color, self_collision = bool },
    get = { "stretch", "shear", "bend", "damping", "rows", "cols", "vertex_count", "self_collision" },
    call = { function(r) return string.format(":particle(%s, %s)", int(r, 1, 8, 0.3), int(r, 1, 8, 0.3)) end,
      function(r) return string.format(":particle(%s)", int(r, 1, 40, 0.3)) end,
      function() return ":particles()" end, function() return ":energy()" end } },
  hr = { set = { stretch = function(r) return num(r, 0, 100) end, bend = function(r) return num(r, 0, 1e-3) end, damping = function(r) return num(r, 0, 0.1) end, color = color },
    get = { "stretch", "bend", "damping", "vertex_count", "anchor" },
    call = { function(r) return string.format(":particle(%s)", int(r, 1, 12, 0.3)) end, function() return ":particles()" end,
      function() return ":energy()" end,
      function(r) return string.format(":move_root(%s, %s%s)", vec(r, 3), r.chance(0.5) and vec(r, 1) .. ", " or "", num(r, 1 / 240, 1 / 30)) end } },
  j = { set = { limits = function(r) return r.pick { "{-0.5, 0.5}", "{swing = 0.3}", "nil", "{1, -1}", "{0/0, 0}", "{}", "{-1e308, 1e308}" } end,
    motor = function(r) return r.pick { "{speed = 1, max = 5}", "nil", "{speed = 1e308, max = 1e308}", "{speed = 1, max = -1}", "{max = 1}", "4",
      "{velocity = {0, 1, 0}, max = 3}", "{velocity = {0, 0/0, 0}, max = 3}" } end,
    break_force = function(r) return num(r, 0, 200) end, break_torque = function(r) return num(r, 0, 200) end,
    stiffness = function(r) return num(r, 0, 500) end, damping = function(r) return num(r, 0, 20) end,
    length = function(r) return num(r, 0, 3) end, rest_length = function(r) return num(r, 0, 2) end },
    get = { "type", "gap", "axis_error", "angle", "position", "speed", "limits", "motor", "a", "b", "force", "torque",
      "break_force", "break_torque", "length", "stiffness", "damping", "rest_length" }, call = {} },
}

ops[#ops + 1] = { w = 18, name = "handle", gen = function(r, ctx)
  local kinds = {}
  for _, k in ipairs(KINDS) do if k ~= "qj" and count(ctx, k) > 0 then kinds[#kinds + 1] = k end end
  if #kinds == 0 then return "collectgarbage()" end
  local kind = r.pick(kinds)
  local h = handle(r, ctx, kind)
  local spec = HANDLE_OPS[kind]
  local c = r.float()
  if c < 0.04 or (c < 0.1 and (kind == "b" or kind == "p")) then return h .. ":destroy()" end
  if c < 0.08 then return string.format("local _ = %s:valid(), tostring(%s)", h, h) end
  local setters = {}
  for k in pairs(spec.set) do setters[#setters + 1] = k end
  table.sort(setters)
  if c < 0.5 and #setters > 0 then
    local key = r.pick(setters)
    return string.format("%s.%s = %s", h, key, spec.set[key](r))
  end
  if c < 0.75 and #spec.call > 0 then return h .. r.pick(spec.call)(r) end
  if #spec.get > 0 then return string.format("local _ = %s.%s", h, r.pick(spec.get)) end
  return h .. ":valid()"
end }

-- impetus.ode, impetus.lcp, impetus.quat, on_contact
ops[#ops + 1] = { w = 2, name = "ode", gen = function(r)
  local n = r.chance(0.1) and r.pick { 0, 50 } or r.int(1, 4)
  local x = {}
  for i = 1, n do x[i] = num(r, -2, 2, 0.05) end
  local f = r.pick { "function(x, t) local d = {} for i = 1, #x do d[i] = -x[i] end return d end",
    "function(x, t) local d = {} for i = 1, #x do d[i] = -1000 * x[i] end return d end",
    "function(x, t) return {} end", "function(x, t) return 'x' end", "function(x, t) error('f fails') end",
    "function(x, t) local d = {} for i = 1, #x do d[i] = 0/0 end return d end", "42" }
  local method = enum(r, INTEGRATORS, 0.1)
  local xs = "{" .. table.concat(x, ", ") .. "}"
  local c = r.int(1, 4)
  if c == 1 then return string.format("impetus.ode.step(%s, %s, %s, %s, %s)", f, xs, num(r, 0, 1), num(r, 1e-3, 0.1, 0.2), method) end
  if c == 2 then
    local opts = def(r, { { "method", method }, { "h", num(r, 1e-3, 0.1, 0.1) }, { "tol", num(r, 1e-8, 1e-3, 0.1) },
      { "base", enum(r, { "rk4", "implicit", "euler" }) }, { "max_growth", num(r, 1, 10) }, { "h_min", num(r, 1e-12, 1e-4, 0.1) } })
    return string.format("impetus.ode.solve(%s, %s, %s, %s, %s)", f, xs, num(r, 0, 1, 0.05), num(r, 1, 2, 0.05), opts)
  end
  if c == 3 then return string.format("impetus.ode.adapt_factor(%s, %s, %s)", num(r, 0, 1), num(r, 1e-8, 1e-3), int(r, 1, 4)) end
  return string.format("impetus.ode.order(%s)", method)
end }

ops[#ops + 1] = { w = 1.5, name = "lcp", gen = function(r)
  local n = r.chance(0.1) and r.pick { 0, 7 } or r.int(1, 5)
  local rows, b = {}, {}
  for i = 1, n do
    local row = {}
    for j = 1, n do row[j] = i == j and num(r, 0.5, 3, 0.08) or num(r, -0.2, 0.2, 0.05) end
    if r.chance(0.03) then row[#row + 1] = "1" end
    rows[i] = "{" .. table.concat(row, ", ") .. "}"
    b[i] = num(r, -2, 2, 0.08)
  end
  if r.chance(0.05) then b[#b + 1] = "1" end
  return string.format("impetus.lcp.solve({%s}, {%s}%s)", table.concat(rows, ", "), table.concat(b, ", "),
    r.chance(0.3) and ", " .. int(r, 0, n, 0.3) or "")
end }

ops[#ops + 1] = { w = 1, name = "quat", gen = function(r)
  local c = r.int(1, 7)
  if c == 1 then return string.format("impetus.quat.from_axis_angle(%s, %s)", vec(r, 1), num(r, -4, 4)) end
  if c == 2 then return string.format("impetus.quat.to_matrix(%s)", quat(r)) end
  if c == 3 then return string.format("impetus.quat.from_matrix({%s, %s, %s})", vec(r, 1), vec(r, 1), vec(r, 1)) end
  if c == 4 then return string.format("impetus.quat.mul(%s, %s)", quat(r), quat(r)) end
  if c == 5 then return string.format("impetus.quat.rotate(%s, %s)", quat(r), vec(r, 2)) end
  if c == 6 then return string.format("impetus.quat.normalize(%s)", quat(r)) end
  return string.format("impetus.quat.conjugate(%s)", quat(r))
end }

ops[#ops + 1] = { w = 1.5, name = "on_contact", gen = function(r, ctx)
  local wi, w = wpick(r, ctx)
  if r.chance(0.5) then return string.format("impetus.dispatch_contacts(%s)", w) end
  return string.format("impetus.on_contact(%s, %s)", handle(r, ctx, "b", wi), r.chance(0.2) and "nil" or callback(r))
end }

-- a scene file with hostile settings and callbacks, run headless by impetus.runner (fuzz_scene.lua)
local scene = require "fuzz_scene"
ops[#ops + 1] = { w = 0.7, name = "scene", gen = function(r) return scene.generate(r) end }

local total = 0
for _, o in ipairs(ops) do total = total + o.w end

-- M.generate(r, ctx) -> source, post (post() records what the operation made, after it ran)
function M.generate(r, ctx)
  local x = r.float() * total
  for _, o in ipairs(ops) do
    x = x - o.w
    if x <= 0 then
      local src, post = o.gen(r, ctx)
      return src, post or function() end
    end
  end
  return "collectgarbage()", function() end
end

M.ops = ops
return M
