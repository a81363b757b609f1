-- scenes/platforms.lua: contact modification and sensors, the platformer's tools. world.pre_solve turns
-- the thin ledges into one-way platforms (a ball thrown up passes through from below and lands on top)
-- and the long low boxes into conveyor belts (the contact's tangent velocity carries crates along). A
-- sensor box at the end of the belts counts the crates that reach it and sends them back to the start.
local impetus = require "impetus"

local LEDGE_TOP = { 2.1, 4.1 }         -- the ledges' top faces (m)
local BELT_SPEED = 1.5                 -- m/s along +x
-- the scene's state in the runner's `state`, which it keeps across hot reloads (which re-run this file)
local S = state
S.delivered, S.ledges, S.belts, S.balls, S.next_throw = S.delivered or 0, S.ledges or {}, S.belts or {}, S.balls or {}, S.next_throw or 0.5

-- a ball moving up, or whose bottom is below a ledge's top by more than a step's sinking, passes through
local function one_way(ledge, body, radius)
  return body.velocity[2] > 0.05 or body.position[2] - radius < ledge.top - 0.05
end

return {
  title = "One-way platforms, conveyor belts and a goal sensor",
  camera = { eye = { 0, 4, 14 }, target = { 0, 2.5, 0 } },
  setup = function(world)
    S.delivered, S.ledges, S.belts = 0, {}, {}
    world:plane { restitution = 0 }
    for i, top in ipairs(LEDGE_TOP) do
      local x = i == 1 and -2.5 or 2.5
      local ledge = world:box { static = true, position = { x, top - 0.1, 0 }, size = { 3, 0.2, 2 }, pre_solve = true,
        restitution = 0, color = { 0.55, 0.75, 0.95 } }
      S.ledges[ledge] = { top = top }
    end
    for i = 1, 2 do
      local belt = world:box { static = true, position = { -2 + 4 * (i - 1), 0.15, -3 }, size = { 3.8, 0.3, 1.2 },
        pre_solve = true, color = { 0.35, 0.35, 0.4 } }
      S.belts[belt] = true
    end
    S.goal = world:box { static = true, sensor = true, position = { 4.5, 0.8, -3 }, size = { 1, 1.2, 1.4 },
      color = { 0.3, 0.9, 0.4, 0.35 } }
    for k = 1, 3 do
      world:box { size = { 0.5, 0.5, 0.5 }, mass = 1, position = { -3.5 + 0.8 * k, 0.55, -3 }, color = { 0.85, 0.6, 0.3 } }
    end
    S.balls = {}
    for k = 1, 2 do
      S.balls[k] = world:sphere { radius = 0.25, mass = 1, position = { k == 1 and -2.5 or 2.5, 0.25, 0 },
        color = { 0.95, 0.85, 0.3 } }
    end
    S.next_throw = 0.5
    world.pre_solve = function(w, c)
      local ledge = S.ledges[c.a] or S.ledges[c.b]
      if ledge then
        local body = S.ledges[c.a] and c.b or c.a
        if body.kind == "body" and one_way(ledge, body, 0.25) then c.enabled = false end
        return
      end
      if S.belts[c.b] then c.tangent_velocity = { BELT_SPEED, 0, 0 }
      elseif S.belts[c.a] then c.tangent_velocity = { -BELT_SPEED, 0, 0 } end
    end
  end,
  update = function(world, dt)
    -- every 3 s each ball is thrown up from under its ledge: it passes through, lands on top and rolls off
    if world.time >= S.next_throw then
      S.next_throw = S.next_throw + 3
      for k, b in ipairs(S.balls) do
        b.position = { k == 1 and -2.5 or 2.5, 0.25, 0 }
        b.velocity = { k == 1 and -0.5 or 0.5, k == 1 and 8 or 10, 0 }
        b.angular_velocity = { 0, 0, 0 }
      end
    end
    for _, e in ipairs(world:contact_events().sensor_begin) do
      if e.sensor == S.goal and e.other.kind == "body" then
        S.delivered = S.delivered + 1
        e.other.position = { -3.5, 0.6, -3 }
        e.other.velocity = { 0, 0, 0 }
      end
    end
  end,
  draw = function(world, gfx)
    gfx.text(10, 80, string.format("crates delivered to the goal sensor: %d", S.delivered), { 1, 1, 1, 0.85 })
  end,
}
