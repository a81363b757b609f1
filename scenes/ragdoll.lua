-- scenes/ragdoll.lua: ragdolls tumbling down a flight of stairs (S1's articulated bodies with contact).
-- Each doll has ten bodies: a box torso, a sphere head and capsule limbs; ball (point) joints at the neck,
-- shoulders and hips with swing cones, hinges at the elbows and knees with angle limits (they bend one way). Joints are held by pre-stabilization while the dolls
-- hit the steps and each other (parts that share a joint do not collide; the others do).
-- Keys: D drops another doll at the top; K kicks every doll down the stairs.
local impetus = require "impetus"

-- the scene's state in a global table, so that a hot reload (which re-runs this file) keeps it; a global
-- rather than the runner's `state`, because specs and tools dofile this file for its doll builder
ragdoll_scene = ragdoll_scene or { dolls = {}, joints = {} }
local S = ragdoll_scene
local STEPS, RISE, RUN = 8, 0.25, 0.5

-- the parts of a standing doll, with its feet at the origin and facing +z: {name, shape, centre, size}
local PARTS = {
  { "torso", "box", { 0, 1.2, 0 }, { 0.36, 0.6, 0.2 }, 1.0 },
  { "head", "sphere", { 0, 1.67, 0 }, 0.11, 1.0 },
  { "arm_l", "capsule", { -0.25, 1.3, 0 }, { 0.05, 0.2 }, 1.0 },
  { "fore_l", "capsule", { -0.25, 0.99, 0 }, { 0.045, 0.2 }, 1.0 },
  { "arm_r", "capsule", { 0.25, 1.3, 0 }, { 0.05, 0.2 }, 1.0 },
  { "fore_r", "capsule", { 0.25, 0.99, 0 }, { 0.045, 0.2 }, 1.0 },
  { "thigh_l", "capsule", { -0.1, 0.69, 0 }, { 0.07, 0.26 }, 1.0 },
  { "shin_l", "capsule", { -0.1, 0.28, 0 }, { 0.06, 0.26 }, 1.0 },
  { "thigh_r", "capsule", { 0.1, 0.69, 0 }, { 0.07, 0.26 }, 1.0 },
  { "shin_r", "capsule", { 0.1, 0.28, 0 }, { 0.06, 0.26 }, 1.0 },
}
-- {type, a, b, anchor, axis, limits}. Neck, shoulders and hips are balls whose swing stays inside a cone
-- about `axis`; elbows and knees hinge about the doll's x axis. A hinge's angle is a's turn relative to b
-- about the axis, so a forearm swinging forward (+z, the way the doll faces) turns by a negative angle
-- (the elbow bends to -2.4 rad, not past straight) and a shin swinging back by a positive one (the knee).
local JOINTS = {
  { "point", "head", "torso", { 0, 1.53, 0 }, { 0, 1, 0 }, { swing = 0.7 } },
  { "point", "arm_l", "torso", { -0.25, 1.45, 0 }, { 0, -1, 0 }, { swing = 2.2 } },
  { "point", "arm_r", "torso", { 0.25, 1.45, 0 }, { 0, -1, 0 }, { swing = 2.2 } },
  { "hinge", "fore_l", "arm_l", { -0.25, 1.145, 0 }, { 1, 0, 0 }, { -2.4, 0 } },
  { "hinge", "fore_r", "arm_r", { 0.25, 1.145, 0 }, { 1, 0, 0 }, { -2.4, 0 } },
  { "point", "thigh_l", "torso", { -0.1, 0.89, 0 }, { 0, -1, 0 }, { swing = 1.5 } },
  { "point", "thigh_r", "torso", { 0.1, 0.89, 0 }, { 0, -1, 0 }, { swing = 1.5 } },
  { "hinge", "shin_l", "thigh_l", { -0.1, 0.485, 0 }, { 1, 0, 0 }, { 0, 2.4 } },
  { "hinge", "shin_r", "thigh_r", { 0.1, 0.485, 0 }, { 1, 0, 0 }, { 0, 2.4 } },
}

-- a doll placed at `at`, turned by the unit quaternion q, moving with velocity v
local function ragdoll(world, at, q, v, color)
  local rot = impetus.quat.rotate
  local function place(p)
    local r = rot(q, p)
    return { at[1] + r[1], at[2] + r[2], at[3] + r[3] }
  end
  local body = {}
  for _, part in ipairs(PARTS) do
    local name, kind, c, size = part[1], part[2], part[3], part[4]
    local def = { position = place(c), orientation = q, velocity = v, density = 1000, friction = 0.6,
                  color = name == "head" and { 0.95, 0.8, 0.65 } or color }
    if kind == "box" then
      def.size = size
      body[name] = world:box(def)
    elseif kind == "sphere" then
      def.radius = size
      body[name] = world:sphere(def)
    else
      def.radius, def.length = size[1], size[2]
      body[name] = world:capsule(def)
    end
  end
  for _, j in ipairs(JOINTS) do
    S.joints[#S.joints + 1] = world:joint { type = j[1], a = body[j[2]], b = body[j[3]], anchor = place(j[4]),
                                        axis = rot(q, j[5]), limits = j[6] }
  end
  S.dolls[#S.dolls + 1] = body
  return body
end

local palette = { { 0.3, 0.55, 0.9 }, { 0.9, 0.4, 0.3 }, { 0.4, 0.8, 0.4 }, { 0.85, 0.75, 0.3 }, { 0.7, 0.45, 0.85 } }

local function drop(world, k)
  local top = STEPS * RISE
  -- lying forward (face down, head towards +x), a little turned, above the top step
  local q = impetus.quat.mul(impetus.quat.from_axis_angle({ 0, 1, 0 }, 0.3 * ((k % 3) - 1)),
                             impetus.quat.from_axis_angle({ 0, 0, 1 }, -math.pi / 2 + 0.4))
  return ragdoll(world, { -0.6 - 0.2 * (k % 2), top + 0.8 + 0.6 * ((k - 1) // 3), -0.9 + 0.9 * ((k - 1) % 3) }, q,
                 { 1.5, 0, 0 }, palette[(k - 1) % #palette + 1])
end

return {
  title = "Ragdolls on stairs (point joints and hinges, S1)",
  keys = { { "d", "drop another doll" }, { "k", "kick the dolls" } },
  camera = { eye = { 6.5, 4.8, 4.8 }, target = { 2.2, 0.6, -0.4 } },
  setup = function(world)
    S.dolls, S.joints = {}, {}
    world:plane { friction = 0.6, restitution = 0 }
    -- the flight: step i's top is (STEPS - i + 1) RISE high, RUN deep along +x, 3 m wide
    for i = 1, STEPS do
      local h = (STEPS - i + 1) * RISE
      world:box { static = true, size = { RUN, h, 3 }, position = { (i - 1) * RUN, h / 2, 0 }, friction = 0.6,
                  restitution = 0 }
    end
    for k = 1, 3 do drop(world, k) end
  end,
  keypressed = function(world, key)
    if key == "d" then drop(world, #S.dolls + 1)
    elseif key == "k" then
      for _, d in ipairs(S.dolls) do
        for _, b in pairs(d) do
          if b:valid() then local v = b.velocity b.velocity = { v[1] + 2.5, v[2] + 2, v[3] } end
        end
      end
    end
  end,
  ragdoll = ragdoll, -- the doll builder itself, for specs (spec/articulated_spec.lua drops one on the ground)
  draw = function(world, gfx)
    local gap = 0
    for _, j in ipairs(S.joints) do if j:valid() then gap = math.max(gap, j.gap) end end
    local _, h = gfx.size()
    gfx.text(16, h - 30, string.format("%d dolls, %d joints   largest joint gap %.1e m   D: drop a doll   K: kick",
      #S.dolls, #S.joints, gap), { 0.9, 0.9, 0.9, 1 })
  end,
}
