-- scenes/wrecking_curtain.lua: a wrecking ball through a curtain. A 40 kg ball on a point joint swings
-- into a hanging cloth (implicit, 36 x 36, pinned along its top); the cloth and the ball collide both
-- ways: the ball pushes the curtain ahead of it and is slowed by the cloth's pull. Keys: Space swings
-- the ball again, H makes the ball light (2 kg: the curtain stops it) or heavy.
local S = state

local function swing(world)
  if S.ball and S.ball:valid() then S.ball:destroy() end
  local mass = S.light and 2 or 40
  S.ball = world:sphere { radius = 0.35, mass = mass, position = { -3.2, 4.4, 0 }, color = { 0.3, 0.3, 0.35 } }
  world:joint { type = "point", a = S.ball, anchor = { 0, 4.4, 0 } }
end

return {
  title = "Wrecking ball through a curtain",
  keys = { { "space", "swing the ball again" }, { "h", "light / heavy ball" } },
  camera = { eye = { 2.5, 3.0, 7.5 }, target = { 0.5, 1.8, 0 } },
  setup = function(world)
    world.integrator = "implicit"
    world:plane { friction = 0.6, restitution = 0 }
    S.curtain = world:cloth {
      rows = 36, cols = 36, width = 3, height = 3, position = { 0, 2.2, 0 }, normal = { 1, 0, 0 }, pin = "top",
      mass = 1.2, radius = 0.03, stretch = 4000, shear = 80, bend = 2e-4, damping = 0.02, friction = 0.4,
      color = { 0.7, 0.15, 0.2 }, back_color = { 0.9, 0.75, 0.5 },
    }
    swing(world)
  end,
  keypressed = function(world, key)
    if key == "space" then swing(world) end
    if key == "h" then S.light = not S.light; swing(world) end
  end,
  draw = function(world, gfx)
    local _, h = gfx.size()
    local v = S.ball:valid() and S.ball.velocity or { 0, 0, 0 }
    gfx.text(16, h - 30, string.format("ball %g kg at %.2f m/s   Space: swing again   H: light / heavy", S.ball:valid() and S.ball.mass or 0,
      math.sqrt(v[1] ^ 2 + v[2] ^ 2 + v[3] ^ 2)), { 0.85, 0.85, 0.85, 1 })
  end,
}
