-- scenes/planar2d.lua: the planar mode (world.planar = true: motion in the x-y plane, rotation about z
-- only) with the 2D camera, as a 2D game would use it. A tower of crates, a seesaw on a wedge and a
-- cannon: Space fires a ball from the left (what it hits hard turns red: impetus.on_contact), B drops a crate. Contacts with friction and restitution
-- are the 3D solver's, with the velocities projected onto the plane each step.
local impetus = require "impetus"

-- state.crates: the bodies a ball may tint, as keys (a handle is the same userdata every time); in the
-- runner's `state`, which a hot reload keeps
local S = state

-- a ball that hits a crate hard tints it: the per-body on_contact callback, run after the step (a
-- file-level function, so a hot reload reaches the balls already flying)
local function on_ball_contact(self, other, e)
  if e.kind == "hit" and e.impulse > 20 and S.crates[other] then other.color = { 0.95, 0.35, 0.3 } end
end

local function fire(world)
  local ball = world:sphere { radius = 0.3, density = 3000, position = { -8, 2, 0 }, velocity = { 14, 5, 0 }, restitution = 0.4,
                              bullet = true, color = { 0.9, 0.2, 0.2 } }
  impetus.on_contact(ball, on_ball_contact)
end

local function crate(world, x, y, w, h, color)
  local box = world:box { size = { w, h, 1 }, position = { x, y, 0 }, friction = 0.6, density = 300, color = color }
  S.crates[box] = true
  return box
end

return {
  title = "Planar mode (2D)",
  keys = { { "space", "fire a ball" }, { "b", "drop a crate" } },
  camera = { mode = "2d", center = { 0, 4 }, height = 12 },
  setup = function(world)
    S.crates = {}
    world.planar = true
    world:plane { friction = 0.6 }
    world:box { static = true, position = { -9, 4, 0 }, size = { 0.4, 8, 1 } }
    world:box { static = true, position = { 9, 4, 0 }, size = { 0.4, 8, 1 } }
    -- a tower of crates
    for row = 0, 7 do
      crate(world, 4 + ((row % 2) * 0.1 - 0.05), 0.4 + row * 0.8, 1.2, 0.8, { 0.8, 0.6, 0.3 })
    end
    -- a seesaw: a plank on a static wedge (a hull), a heavy crate on one end
    world:hull { static = true, points = { { -2.6, 0, -0.5 }, { -1.4, 0, -0.5 }, { -2, 0.8, -0.5 },
                                           { -2.6, 0, 0.5 }, { -1.4, 0, 0.5 }, { -2, 0.8, 0.5 } }, color = { 0.5, 0.5, 0.55 } }
    world:box { size = { 5, 0.2, 1 }, position = { -2, 0.95, 0 }, friction = 0.8, density = 200, color = { 0.6, 0.45, 0.3 } }
    crate(world, -3.8, 1.5, 0.8, 0.8, { 0.3, 0.6, 0.8 })
  end,
  keypressed = function(world, key)
    if key == "space" then
      fire(world)
    elseif key == "b" then
      crate(world, 0.5 * (math.random() - 0.5), 11, 0.8, 0.8, { 0.3, 0.8, 0.4 })
    end
  end,
  update = function(world, dt)
    -- a ball every 1.5 s for the first seconds, so the headless run shows the game
    if world.time < 6 and math.floor(world.time / 1.5) ~= math.floor((world.time + dt) / 1.5) then fire(world) end
  end,
}
