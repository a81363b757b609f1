-- scenes/qp_joints.lua: joint.c's joints under exact contact (world.contact = "qp"): each joint's
-- constrained directions are equality rows of the LCP, solved with the contacts.
-- Left: a hinge pendulum on a tilted axis, spinning about it. Middle: a prismatic slider on a rail at
-- 30 degrees from the vertical (it slides at g cos 30 exactly) that lands on a box. Right: a bead on a
-- rod that spins on a vertical hinge (prismatic joint between two bodies, no contact between them).
-- The text shows each joint's gap and axis error (joint.c's measures).
local s2 = 1 / math.sqrt(2)
local joints = {}

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
    joints[1] = world:joint { type = "hinge", a = arm, anchor = { -4, 3, 0 }, axis = { 0, s2, s2 } }
    -- the slider on a rail at 30 degrees, landing on a box
    local a = math.rad(30)
    local slider = world:box { size = { 0.3, 0.3, 0.3 }, position = { -0.6, 3, 0 }, mass = 1, color = { 0.3, 0.7, 0.9 } }
    joints[2] = world:joint { type = "prismatic", a = slider, anchor = { -0.6, 3, 0 }, axis = { math.sin(a), -math.cos(a), 0 } }
    world:box { size = { 1, 0.6, 1 }, position = { 0.5, 0.3, 0 }, mass = 3, color = { 0.6, 0.6, 0.6 } }
    -- the bead on a spinning rod
    local rod = world:box { size = { 3, 0.1, 0.1 }, position = { 3.5, 1.5, 0 }, mass = 1, color = { 0.5, 0.8, 0.4 } }
    local bead = world:box { size = { 0.2, 0.2, 0.2 }, position = { 3.8, 1.5, 0 }, mass = 0.5, color = { 0.9, 0.8, 0.3 } }
    joints[3] = world:joint { type = "hinge", a = rod, anchor = { 3.5, 1.5, 0 }, axis = { 0, 1, 0 } }
    joints[4] = world:joint { type = "prismatic", a = bead, b = rod, anchor = { 3.8, 1.5, 0 }, axis = { 1, 0, 0 } }
    rod.angular_velocity, bead.angular_velocity, bead.velocity = { 0, 2, 0 }, { 0, 2, 0 }, { 0, 0, -0.6 }
  end,
  draw = function(world, gfx)
    -- the joints: the pendulum's anchor and axis, the slider's rail, the spinning rod's axle
    local white, rail = { 1, 1, 1, 0.9 }, { 0.9, 0.9, 0.5, 0.9 }
    gfx.sphere({ -4, 3, 0 }, 0.05, white)
    gfx.line({ -4, 3 - 0.6 * s2, -0.6 * s2 }, { -4, 3 + 0.6 * s2, 0.6 * s2 }, white)
    local a = math.rad(30)
    gfx.line({ -0.6 - 0.5 * math.sin(a), 3 + 0.5 * math.cos(a), 0 }, { -0.6 + 3 * math.sin(a), 3 - 3 * math.cos(a), 0 }, rail)
    gfx.line({ 3.5, 0, 0 }, { 3.5, 2.2, 0 }, white)
    local y = 80
    for _, j in ipairs(joints) do
      if j:valid() then
        gfx.text(10, y, string.format("%-9s gap %.1e m   axis error %.1e", j.type, j.gap, j.axis_error), { 1, 1, 1, 0.85 })
        y = y + gfx.line_height()
      end
    end
    gfx.text(10, y, string.format("impacts %d", world:contact_stats().impacts), { 1, 1, 1, 0.85 })
  end,
}
