package io.delayedtask.operator.gitops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.luaj.vm2.Globals;
import org.luaj.vm2.LoadState;
import org.luaj.vm2.LuaTable;
import org.luaj.vm2.LuaValue;
import org.luaj.vm2.Varargs;
import org.luaj.vm2.compiler.LuaC;
import org.luaj.vm2.lib.PackageLib;
import org.luaj.vm2.lib.TableLib;
import org.luaj.vm2.lib.jse.JseBaseLib;

/**
 * Runs an Argo CD resource customization script the way Argo CD's Lua VM does (util/lua in
 * argoproj/argo-cd): the resource as a global table {@code obj} (JSON numbers as Lua numbers), only
 * the base, package and table libraries (Argo CD adds a reduced os library, which these scripts do
 * not use; there is no string or io), and the table the script returns converted back to JSON-like
 * Java values.
 */
final class ArgoCdLua {

  /** The folder Argo CD's layout names after the group and kind. */
  static final Path DELAYED_TASK =
      Path.of("argocd", "resource_customizations", "delayedtask.io", "DelayedTask");

  static final Path DELAYED_TASK_QUEUE =
      Path.of("argocd", "resource_customizations", "delayedtask.io", "DelayedTaskQueue");

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private ArgoCdLua() {}

  /** Runs {@code script} with {@code obj} set to the resource, returns what the script returns. */
  static Object run(Path script, Map<String, Object> obj) {
    Globals globals = new Globals();
    globals.load(new JseBaseLib());
    globals.load(new PackageLib());
    globals.load(new TableLib());
    LoadState.install(globals);
    LuaC.install(globals);
    globals.set("obj", toLua(obj));
    Varargs result = globals.load(read(script), script.toString()).invoke();
    return fromLua(result.arg1());
  }

  static Map<String, Object> yamlFile(Path file) {
    try {
      @SuppressWarnings("unchecked")
      Map<String, Object> map =
          (Map<String, Object>) normalize(YAML.readValue(file.toFile(), Map.class));
      return map;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> yaml(String text) {
    try {
      return (Map<String, Object>) normalize(YAML.readValue(text, Map.class));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Numbers as Long or Double, the way a JSON round trip through Lua leaves them. */
  private static Object normalize(Object value) {
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> out = new LinkedHashMap<>();
      map.forEach((k, v) -> out.put(String.valueOf(k), normalize(v)));
      return out;
    }
    if (value instanceof List<?> list) {
      return list.stream().map(ArgoCdLua::normalize).toList();
    }
    if (value instanceof Number number) {
      double d = number.doubleValue();
      return d == Math.rint(d) ? (Object) (long) d : (Object) d;
    }
    return value;
  }

  private static LuaValue toLua(Object value) {
    if (value == null) {
      return LuaValue.NIL;
    }
    if (value instanceof Map<?, ?> map) {
      LuaTable table = new LuaTable();
      map.forEach((k, v) -> table.set(String.valueOf(k), toLua(v)));
      return table;
    }
    if (value instanceof List<?> list) {
      LuaTable table = new LuaTable();
      for (int i = 0; i < list.size(); i++) {
        table.set(i + 1, toLua(list.get(i)));
      }
      return table;
    }
    if (value instanceof Boolean b) {
      return LuaValue.valueOf(b);
    }
    if (value instanceof Number n) {
      return LuaValue.valueOf(n.doubleValue()); // gopher-lua numbers are float64, as JSON's
    }
    return LuaValue.valueOf(value.toString());
  }

  private static Object fromLua(LuaValue value) {
    if (value.isnil()) {
      return null;
    }
    if (value.isboolean()) {
      return value.toboolean();
    }
    if (value.type() == LuaValue.TNUMBER) {
      return normalize(value.todouble());
    }
    if (value.isstring()) {
      return value.tojstring();
    }
    if (value.istable()) {
      LuaTable table = value.checktable();
      int length = table.length();
      if (length > 0 && length == table.keyCount()) {
        List<Object> list = new ArrayList<>();
        for (int i = 1; i <= length; i++) {
          list.add(fromLua(table.get(i)));
        }
        return list;
      }
      Map<String, Object> map = new LinkedHashMap<>();
      for (LuaValue key : table.keys()) {
        map.put(key.tojstring(), fromLua(table.get(key)));
      }
      return map;
    }
    throw new IllegalArgumentException(
        "a script returned a Lua " + value.typename() + ", which Argo CD cannot read");
  }
}
