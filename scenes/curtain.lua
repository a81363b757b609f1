-- scenes/curtain.lua: a curtain pinned along its top edge (fixed particles: the implicit solve
-- filters them out, no huge masses), pushed by a ball on a pendulum that the script swings
-- through it. Particles collide with the moving sphere; the curtain folds and swings back.
-- Keys: space pauses, B stops / starts the ball, W blows a gust through the curtain.
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
local PIVOT, LENGTH, AMPLITUDE = { 0, 3.2, 0.9 }, 2.2, 0.6

local function ball_at(t)
  local a = AMPLITUDE * math.sin(1.9 * t) -- rad, about the x axis
  return { PIVOT[1], PIVOT[2] - LENGTH * math.cos(a), PIVOT[3] + LENGTH * math.sin(a) }
end

return {
  title = "Curtain pinned at its top edge (implicit)",
  keys = { { "b", "stop / start the ball" }, { "w", "a gust of wind" } },
  camera = { eye = { 2.3, 1.9, 3.1 }, target = { 0, 1.3, 0 } }, -- in front of the curtain, to the side
  setup = function(world)
    world.integrator = "implicit"
    S.swinging, S.gust_until = true, -1
    world:plane { friction = 0.6, restitution = 0 }
    S.curtain = world:cloth {
      rows = 40, cols = 32, width = 2.0, height = 2.4, normal = { 0, 0, 1 }, position = { 0, 1.45, 0 },
      pin = "top", mass = 0.6, radius = 0.015, stretch = 3000, shear = 60, bend = 1e-3, damping = 0.01,
      color = { 0.92, 0.34, 0.42 }, back_color = { 0.86, 0.76, 0.62 },
    }
    S.ball = world:sphere { static = true, position = ball_at(0), radius = 0.28, friction = 0.3, restitution = 0 }
    world:field(function(x, y, z, vx, vy, vz, t)
      if t > S.gust_until then return 0, 0, 0 end
      return 0, 0, -0.004 * (3 + 2 * math.sin(3 * x + 7 * t)) -- a gust towards -z
    end)
  end,
  update = function(world, dt)
    if S.swinging then S.ball.position = ball_at(world.time + dt) end
  end,
  keypressed = function(world, key)
    if key == "b" then S.swinging = not S.swinging end
    if key == "w" then S.gust_until = world.time + 1.5 end
  end,
  draw = function(world, gfx)
    local b = S.ball.position
    gfx.line(PIVOT, b, { 0.8, 0.8, 0.8, 1 })
    gfx.sphere(b, 0.28, { 0.85, 0.62, 0.20, 1 })
    local _, h = gfx.size()
    local p = world:profile()
    gfx.text(16, h - 50, string.format("%d particles   CG %d iterations   %.2f ms/step", world.particle_count,
      p.cg_iterations, p.total), { 0.85, 0.85, 0.85, 1 })
    gfx.text(16, h - 30, "B: stop / start the ball   W: a gust of wind   drag the curtain with the mouse", { 0.8, 0.8, 0.8, 1 })
  end,
}
