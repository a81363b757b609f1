-- scenes/dominoes.lua: 60 dominoes on a spiral, the first one tipped. Each falls onto the next: the
-- tipping passes down the line through friction and collision impulses, and the fallen stones settle
-- into a resting, sleeping chain.
return {
  title = "Dominoes",
  camera = { eye = { 0, 9, 14 }, target = { 0, 0, 0 } },
  setup = function(world)
    world:plane { friction = 0.5 }
    local n, s = 60, 0
    for i = 0, n - 1 do
      local r = 2.2 + 0.055 * i
      local a = s / r -- arc length s along the spiral: spacing 0.32 m
      s = s + 0.32
      local x, z = r * math.cos(a), r * math.sin(a)
      world:box { size = { 0.08, 0.5, 0.25 }, position = { x, 0.25, z }, axis = { 0, 1, 0 }, angle = -(a + math.pi / 2), -- thin side along the spiral
                  friction = 0.5, density = 700,
                  color = { 0.95, 0.95 - 0.01 * i, 0.85 - 0.01 * i } }
    end
    -- tip the first one (at angle 0, radial axis x) towards the second (+z): turning about its
    -- bottom edge, omega = 2.5 rad/s about x and v = omega x (0, 0.25, 0) at the centre
    local first = world:bodies()[1]
    first.angular_velocity = { 2.5, 0, 0 }
    first.velocity = { 0, 0, 0.625 }
  end,
}
