-- scenes/qp_joints.lua: joint.c's joints under exact contact (world.contact = "qp"): each joint's
-- constrained directions are equality rows of the LCP, solved with the contacts.
-- Left: a hinge pendulum on a tilted axis, spinning about it. Middle: a prismatic slider on a rail at
-- 30 degrees from the vertical (it slides at g cos 30 exactly) that lands on a box. Right: a bead on a
-- rod that spins on a vertical hinge (prismatic joint between two bodies, no contact between them),
-- held towards the axle by a damped spring along the rod (a force pair the script applies each
-- step): the spin flings it out, the spring pulls it back, and the rod slows as the bead goes out
-- (angular momentum about the axle is kept).
-- The text shows each joint's gap and axis error (joint.c's measures).
local s2 = 1 / math.sqrt(2)
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.joints = S.joints or {}
local AXLE = { 3.5, 1.5, 0 }
local SPRING_K, SPRING_C, SPRING_REST = 8, 0.3, 0.5 -- N/m, N s/m, m from the axle
local BEAD_START = 0.3                               -- m from the axle

return {
  title = "Joints as equality rows (qp)",
  camera = { eye = { 0, 3.5, 8 }, target = { 0, 1.8, 0 } },
  debug = { contacts = true },
  setup = function(world)
    world.contact = "qp"
    world.friction = 0.3
    world:body { static = true, shapes = { { type = "plane" } } }
    -- the hinge pendulum
    local arm = world:box { size = { 1, 0.2, 0.3 }, position = { -3.5, 3, 0 }, mass = 2, color = { 0.9, 0.5, 0.3 } }
    arm.angular_velocity, arm.velocity = { 0, 2, 2 }, { 0, 1, -1 }
    S.joints[1] = world:joint { type = "hinge", a = arm, anchor = { -4, 3, 0 }, axis = { 0, s2, s2 } }
    -- the slider on a rail at 30 degrees, landing on a box
    local a = math.rad(30)
    local slider = world:box { size = { 0.3, 0.3, 0.3 }, position = { -0.6, 3, 0 }, mass = 1, color = { 0.3, 0.7, 0.9 } }
    S.joints[2] = world:joint { type = "prismatic", a = slider, anchor = { -0.6, 3, 0 }, axis = { math.sin(a), -math.cos(a), 0 } }
    world:box { size = { 1, 0.6, 1 }, position = { 0.5, 0.3, 0 }, mass = 3, color = { 0.6, 0.6, 0.6 } }
    -- the bead on a spinning rod
    S.rod = world:box { size = { 3, 0.1, 0.1 }, position = AXLE, mass = 1, color = { 0.5, 0.8, 0.4 } }
    S.bead = world:box { size = { 0.2, 0.2, 0.2 }, position = { AXLE[1] + BEAD_START, AXLE[2], 0 }, mass = 0.5,
                       color = { 0.9, 0.8, 0.3 } }
    S.joints[3] = world:joint { type = "hinge", a = S.rod, anchor = AXLE, axis = { 0, 1, 0 } }
    S.joints[4] = world:joint { type = "prismatic", a = S.bead, b = S.rod, anchor = S.bead.position, axis = { 1, 0, 0 } }
    S.rod.angular_velocity, S.bead.angular_velocity, S.bead.velocity = { 0, 2, 0 }, { 0, 2, 0 }, { 0, 0, -0.6 }
  end,
  update = function(world, dt)
    -- the spring along the rod: f = -k (s - rest) - c s' on the bead, -f on the rod at the same point
    -- (along the rod through the axle line, so it puts no torque on the rod about the axle)
    local slider = S.joints[4]
    if not (slider:valid() and S.rod:valid() and S.bead:valid()) then return end
    local R = S.rod.rotation
    local along = { R[1][1], R[2][1], R[3][1] } -- the rod's long axis in the world
    local f = -SPRING_K * (BEAD_START + slider.position - SPRING_REST) - SPRING_C * slider.speed
    local p = S.bead.position
    S.bead:apply_force({ f * along[1], f * along[2], f * along[3] }, p)
    S.rod:apply_force({ -f * along[1], -f * along[2], -f * along[3] }, p)
  end,
  draw = function(world, gfx)
    -- what the joints hang from, drawn only (they are joints to the world): the pendulum's post and
    -- axle, the slider's rail with its top stop, the spinning rod's axle post
    local steel, pin, rail = { 0.55, 0.58, 0.62, 1 }, { 0.85, 0.85, 0.9, 1 }, { 0.9, 0.9, 0.5, 0.9 }
    gfx.box({ -4, 1.42, -0.3 }, { 0.06, 1.42, 0.06 }, steel)
    gfx.box({ -4, 2.92, -0.15 }, { 0.06, 0.06, 0.2 }, steel)
    gfx.sphere({ -4, 3, 0 }, 0.07, pin)
    gfx.line({ -4, 3 - 0.6 * s2, -0.6 * s2 }, { -4, 3 + 0.6 * s2, 0.6 * s2 }, pin)
    local a = math.rad(30)
    local top = { -0.6 - 0.5 * math.sin(a), 3 + 0.5 * math.cos(a), 0 }
    gfx.line(top, { -0.6 + 3 * math.sin(a), 3 - 3 * math.cos(a), 0 }, rail)
    gfx.box(top, { 0.08, 0.08, 0.08 }, steel)
    gfx.box({ AXLE[1], 0.7, 0 }, { 0.05, 0.7, 0.05 }, steel)
    gfx.sphere(AXLE, 0.07, pin)
    local _, h = gfx.size()
    local y = h - (#S.joints + 1) * gfx.line_height() - 12
    for _, j in ipairs(S.joints) do
      if j:valid() then
        gfx.text(10, y, string.format("%-9s gap %.1e m   axis error %.1e", j.type, j.gap, j.axis_error), { 1, 1, 1, 0.85 })
        y = y + gfx.line_height()
      end
    end
    gfx.text(10, y, string.format("impacts %d", world:contact_stats().impacts), { 1, 1, 1, 0.85 })
  end,
}
