-- premake5.lua: the one build description of impetus.
--
--   engine        static C11 library: the dynamics pipeline (no Lua, no SDL, no GL)
--   impetus.core  the Lua 5.4 C module that specs and scripts `require "impetus.core"`
--   impetus       the host program: SDL2 + OpenGL 3.3 core (libepoxy) + SDL2_mixer + embedded Lua 5.4
--
-- Configurations: Debug, Release, Sanitize (AddressSanitizer + UBSan). Outputs go to
-- build/<config>/bin/impetus and build/<config>/lib/impetus/core.so.
--
-- Runs natively under premake5 (`premake5 gmake`), and under Debian's premake4 through the shim
-- below (`premake4 --file=premake5.lua gmake`): premake4 lacks filter(), cdialect(), symbols(),
-- optimize() and warnings(), so they are mapped onto its configuration() and flags.

if _PREMAKE_VERSION:sub(1, 1) == "4" then
  -- filter { "configurations:Release" } -> configuration "Release"; an empty filter resets it
  function filter(f)
    if type(f) == "string" then f = { f } end
    local terms = {}
    for _, term in ipairs(f) do
      local value = term:match("^configurations:(.+)$") or term
      table.insert(terms, value)
    end
    configuration(#terms > 0 and terms or "*")
  end
  function cdialect(d) buildoptions { "-std=" .. d:lower() } end
  function symbols(s) if s == "On" then flags { "Symbols" } end end
  function optimize(o) if o == "On" or o == "Speed" then flags { "OptimizeSpeed" } end end
  function warnings(w) if w == "Extra" then buildoptions { "-Wall", "-Wextra" } end end
  workspace = solution
end

local configs = { Debug = "debug", Release = "release", Sanitize = "sanitize" }

-- where each configuration's outputs go; sub is "bin" or "lib/impetus"
local function outputs(sub)
  for name, dir in pairs(configs) do
    filter { "configurations:" .. name }
      targetdir("build/" .. dir .. "/" .. sub)
      objdir("build/obj/" .. dir)
  end
  filter {}
end

workspace "impetus"
  configurations { "Release", "Debug", "Sanitize" }
  location "build"
  language "C"
  cdialect "C11"
  warnings "Extra"
  includedirs { ".", "/usr/include/lua5.4", "/usr/include/stb" }
  defines { "_DEFAULT_SOURCE" }

  filter { "configurations:Debug" }
    symbols "On"
    defines { "DEBUG" }
  filter { "configurations:Release" }
    optimize "Speed"
    symbols "On" -- unstripped, so profilers and backtraces name every function
    defines { "NDEBUG" }
  filter { "configurations:Sanitize" }
    symbols "On"
    buildoptions { "-O1", "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-fno-sanitize-recover=undefined" }
    linkoptions { "-fsanitize=address,undefined" }
  filter {}

project "engine"
  kind "StaticLib"
  files { "engine/*.h", "engine/*.c" }
  buildoptions { "-fPIC" }
  outputs("lib")

project "impetus.core"
  kind "SharedLib"
  targetname "core"
  targetprefix ""
  files { "engine/lua/*.h", "engine/lua/*.c" }
  links { "engine", "m", "pthread" }
  outputs("lib/impetus")

project "impetus"
  kind "ConsoleApp"
  files { "render/*.h", "render/*.c", "engine/lua/*.c" }
  buildoptions { "`pkg-config --cflags sdl2 SDL2_mixer epoxy`" }
  links { "engine", "lua5.4", "m", "pthread" }
  linkoptions { "`pkg-config --libs sdl2 SDL2_mixer epoxy`", "-Wl,-E" }
  outputs("bin")
