-- Gyroscopic motion against closed forms: a pinned top's precession, a conical pendulum's rate, the
-- intermediate axis flip of a body on a joint at its centre of mass (spec/support/tops.lua), in both
-- contact modes. The impulse mode turns a jointed body with its angular momentum held (rotation.c) and
-- a body on a ball joint at a fixed point about that point (joint_position.c); the exact mode
-- integrates the constrained equations of motion.
local impetus = require "impetus"
local helpers = require "helpers"
local tops = require "tops"
local near = helpers.near

local turned = tops.turned

for _, mode in ipairs { "impulse", "qp" } do
  describe("gyroscopic motion (world.contact = \"" .. mode .. "\")", function()
    for _, dt in ipairs { 1 / 60, 1 / 240 } do
      it(string.format("a pinned top precesses at m g r / (I3 spin) within 1 %% at dt 1/%d, its axis level and L_y kept", math.floor(1 / dt + 0.5)), function()
        local w, b, j, Om = tops.pinned_top(mode, 100)
        local L0, e0 = tops.vertical_momentum(b, { 0, 1, 0 }), b:kinetic_energy() + b.mass * 9.81 * b.position[2]
        local sag, dL = 0, 0
        local angle = turned(b, math.floor(5 / dt + 0.5), function()
          w:step(dt)
          sag = math.max(sag, math.abs(b.position[2] - 1))
          dL = math.max(dL, math.abs(tops.vertical_momentum(b, { 0, 1, 0 }) - L0) / L0)
        end)
        near(angle / 5, Om, 0.01 * Om, "precession rate")
        assert(sag < 1e-3, "the axis sagged " .. sag .. " m")
        assert(dL < 1e-3, "|dL_y| / L_y " .. dL)
        local e = b:kinetic_energy() + b.mass * 9.81 * b.position[2]
        near(e, e0, 0.01 * e0, "energy")
        -- the impulse mode's joints are pre-stabilized onto their constraints every step; the exact
        -- mode holds them by S4's feedback on the accelerations, which leaves a drift of O(h^2)
        local most = mode == "qp" and 1e-5 or 1e-6
        assert(j.gap < most, "joint gap " .. j.gap)
      end)
    end

    it("a rod turns as a conical pendulum at W^2 = m g d / ((I1 - I3) cos alpha) within 0.5 %", function()
      local w, b, W = tops.conical_pendulum(mode, 0.5)
      local y0 = b.position[2]
      local angle = turned(b, 240, function() w:step(1 / 60) end)
      near(angle / 4, W, 0.005 * W, "turning rate")
      near(b.position[2], y0, 1e-3, "height of the centre")
    end)

    it("a box on a ball joint at its centre of mass flips about its middle axis as the free box does", function()
      local wf, bf, T = tops.flipping_box(mode, false)
      local free = tops.flip_half_period(wf, bf, 1 / 60, 30)
      local wj, bj = tops.flipping_box(mode, true)
      local jointed, crossings = tops.flip_half_period(wj, bj, 1 / 60, 30)
      assert(jointed, "the jointed box never flipped (" .. crossings .. " sign changes of omega_y)")
      near(free, T, 0.01 * T, "the free box's half period")
      near(jointed, T, 0.01 * T, "the jointed box's half period")
    end)
  end)
end
