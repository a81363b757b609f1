-- scenes/bench/pile_1000.lua: the peer benchmark's pile: 10 x 10 x 10 unit boxes with 0.2 m gaps
-- dropped on the ground, friction 0.6, dt 1/60 (bench/peers runs the same scene in ODE and Bullet).
-- Run: ./impetus bench --steps 1000 scenes/bench/pile_1000.lua
local function pile(world)
  world:plane { friction = 0.6 }
  for layer = 0, 9 do
    for i = 0, 9 do
      for k = 0, 9 do
        world:box { size = { 1, 1, 1 }, friction = 0.6,
                    position = { (i - 4.5) * 1.2, 0.5 + 0.2 + layer * 1.2, (k - 4.5) * 1.2 },
                    color = { 0.5 + 0.05 * layer, 0.45, 0.3 + 0.05 * i } }
      end
    end
  end
end

return {
  title = "1000 boxes: a 10 x 10 x 10 pile",
  dt = 1 / 60,
  camera = { eye = { 22, 16, 26 }, target = { 0, 4, 0 } },
  pile = pile,
  setup = function(world)
    world.sleeping = os.getenv("IMPETUS_SLEEP") ~= "0" -- IMPETUS_SLEEP=0: every body awake every step
    pile(world)
  end,
}
