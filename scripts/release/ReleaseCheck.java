import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * Checks a release build's file repository the way Maven Central would, and a little more:
 * every published module is there with its POM, jar, sources and javadoc (a POM only for pom
 * packaging); every file has a signature that gpg verifies and checksums that match; every POM
 * names itself and carries, itself or through its parent, what Central requires; no version is a
 * snapshot; and every jar names its own module, its package, and no two jars share one.
 *
 * <p>Run by scripts/release-build: {@code java ReleaseCheck.java REPO VERSION ARTIFACT...}, with
 * GNUPGHOME set to the keyring that holds the signing key. Prints one line per problem and exits
 * 1 if there is any.
 */
public class ReleaseCheck {

  private static final String GROUP_PATH = "dev/baton";
  private static final List<String> REQUIRED_IN_EACH_POM = List.of("name", "description");
  private static final List<String> REQUIRED_OR_INHERITED = List.of("url", "licenses", "developers", "scm");

  private final Path repo;
  private final String version;
  private final List<String> problems = new ArrayList<>();
  private final Map<String, String> moduleNames = new LinkedHashMap<>();
  private int signatures;

  ReleaseCheck(Path repo, String version) {
    this.repo = repo;
    this.version = version;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: java ReleaseCheck.java REPO VERSION ARTIFACT...");
      System.exit(2);
    }
    ReleaseCheck check = new ReleaseCheck(Path.of(args[0]), args[1]);
    for (int i = 2; i < args.length; i++) {
      check.artifact(args[i]);
    }
    check.nothingElse(List.of(args).subList(2, args.length));
    if (!check.problems.isEmpty()) {
      check.problems.forEach(p -> System.out.println("release check: " + p));
      System.exit(1);
    }
    System.out.printf(
        "release check: %d artifacts, %d signatures verified, module names %s%n",
        args.length - 2, check.signatures, check.moduleNames.values());
  }

  private void artifact(String artifactId) throws Exception {
    if (version.contains("SNAPSHOT")) {
      problems.add("version " + version + " is a snapshot, which Maven Central refuses");
    }
    Path dir = repo.resolve(GROUP_PATH).resolve(artifactId).resolve(version);
    String base = artifactId + "-" + version;
    Path pom = dir.resolve(base + ".pom");
    if (!Files.isRegularFile(pom)) {
      problems.add(artifactId + ": no " + pom + " (was the module deployed?)");
      return;
    }
    Document model = parse(pom);
    Element project = model.getDocumentElement();
    String packaging = text(project, "packaging");
    List<Path> files = new ArrayList<>(List.of(pom));
    if (!"pom".equals(packaging)) {
      files.add(dir.resolve(base + ".jar"));
      files.add(dir.resolve(base + "-sources.jar"));
      files.add(dir.resolve(base + "-javadoc.jar"));
    }
    for (Path file : files) {
      if (!Files.isRegularFile(file)) {
        problems.add(artifactId + ": missing " + file.getFileName());
        continue;
      }
      signed(file);
      checksums(file);
    }
    pom(artifactId, pom, project);
    if (!"pom".equals(packaging)) {
      jar(artifactId, dir.resolve(base + ".jar"));
      contains(artifactId, dir.resolve(base + "-sources.jar"), ".java");
      contains(artifactId, dir.resolve(base + "-javadoc.jar"), "index.html");
    }
  }

  private void signed(Path file) throws IOException, InterruptedException {
    Path signature = file.resolveSibling(file.getFileName() + ".asc");
    if (!Files.isRegularFile(signature)) {
      problems.add("no signature for " + repo.relativize(file));
      return;
    }
    Process gpg =
        new ProcessBuilder("gpg", "--batch", "--verify", signature.toString(), file.toString())
            .redirectErrorStream(true)
            .start();
    String said = new String(gpg.getInputStream().readAllBytes());
    if (gpg.waitFor() != 0) {
      problems.add("signature of " + repo.relativize(file) + " does not verify: " + said.strip());
      return;
    }
    signatures++;
  }

  private void checksums(Path file) throws IOException, NoSuchAlgorithmException {
    byte[] bytes = Files.readAllBytes(file);
    for (String[] kind : new String[][] {{"md5", "MD5"}, {"sha1", "SHA-1"}}) {
      Path sum = file.resolveSibling(file.getFileName() + "." + kind[0]);
      if (!Files.isRegularFile(sum)) {
        problems.add("no " + kind[0] + " for " + repo.relativize(file));
        continue;
      }
      String expected = HexFormat.of().formatHex(MessageDigest.getInstance(kind[1]).digest(bytes));
      String written = Files.readString(sum).strip().split("\\s+")[0];
      if (!expected.equalsIgnoreCase(written)) {
        problems.add(kind[0] + " of " + repo.relativize(file) + " is " + written + ", not " + expected);
      }
    }
  }

  private void pom(String artifactId, Path pom, Element project) throws Exception {
    if (Files.readString(pom).contains("SNAPSHOT")) {
      problems.add(artifactId + ": its POM names a SNAPSHOT version");
    }
    for (String element : REQUIRED_IN_EACH_POM) {
      if (text(project, element) == null) {
        problems.add(artifactId + ": its POM has no <" + element + "> (Maven Central requires one)");
      }
    }
    for (String element : REQUIRED_OR_INHERITED) {
      if (!inPomOrParents(project, element)) {
        problems.add(
            artifactId + ": neither its POM nor a parent in the repository has <" + element + ">");
      }
    }
  }

  private boolean inPomOrParents(Element project, String element) throws Exception {
    Element current = project;
    for (int depth = 0; current != null && depth < 5; depth++) {
      if (child(current, element) != null) {
        return true;
      }
      Element parent = child(current, "parent");
      if (parent == null) {
        return false;
      }
      String artifact = text(parent, "artifactId");
      String parentVersion = text(parent, "version");
      Path parentPom =
          repo.resolve(GROUP_PATH)
              .resolve(artifact)
              .resolve(parentVersion)
              .resolve(artifact + "-" + parentVersion + ".pom");
      if (!Files.isRegularFile(parentPom)) {
        problems.add("parent " + artifact + ":" + parentVersion + " is not in the repository");
        return false;
      }
      current = parse(parentPom).getDocumentElement();
    }
    return false;
  }

  private void jar(String artifactId, Path jar) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      String name =
          file.getManifest() == null
              ? null
              : file.getManifest().getMainAttributes().getValue("Automatic-Module-Name");
      if (name == null || name.isBlank()) {
        problems.add(artifactId + ": its jar has no Automatic-Module-Name");
        return;
      }
      try {
        ModuleDescriptor.newModule(name);
      } catch (IllegalArgumentException e) {
        problems.add(artifactId + ": Automatic-Module-Name '" + name + "' is not a module name");
        return;
      }
      if (moduleNames.containsValue(name)) {
        problems.add(artifactId + ": Automatic-Module-Name '" + name + "' is another jar's too");
      }
      moduleNames.put(artifactId, name);
      String packagePath = name.replace('.', '/') + "/";
      file.stream()
          .filter(e -> e.getName().endsWith(".class") && !e.getName().startsWith("META-INF/"))
          .filter(e -> !e.getName().startsWith(packagePath))
          .findFirst()
          .ifPresent(
              e ->
                  problems.add(
                      artifactId
                          + ": "
                          + e.getName()
                          + " lies outside its module's package "
                          + name));
    }
  }

  private void contains(String artifactId, Path jar, String suffix) throws IOException {
    if (!Files.isRegularFile(jar)) {
      return;
    }
    try (JarFile file = new JarFile(jar.toFile())) {
      if (file.stream().noneMatch(e -> e.getName().endsWith(suffix))) {
        problems.add(artifactId + ": " + jar.getFileName() + " holds no " + suffix);
      }
    }
  }

  /** Nothing is published that the list does not name (a test module deployed by mistake). */
  private void nothingElse(List<String> expected) throws IOException {
    Path group = repo.resolve(GROUP_PATH);
    if (!Files.isDirectory(group)) {
      problems.add("nothing was deployed under " + group);
      return;
    }
    try (Stream<Path> deployed = Files.list(group)) {
      deployed
          .map(p -> p.getFileName().toString())
          .filter(name -> !expected.contains(name))
          .forEach(name -> problems.add(name + " was deployed but is not meant to be published"));
    }
  }

  private static Document parse(Path pom) throws Exception {
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    factory.setNamespaceAware(false);
    factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
    try (InputStream in = Files.newInputStream(pom)) {
      return factory.newDocumentBuilder().parse(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Element child(Element parent, String name) {
    for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
      if (n instanceof Element e && e.getTagName().equals(name)) {
        return e;
      }
    }
    return null;
  }

  private static String text(Element parent, String name) {
    Element e = child(parent, name);
    if (e == null || e.getTextContent().isBlank()) {
      return null;
    }
    return e.getTextContent().strip();
  }
}
