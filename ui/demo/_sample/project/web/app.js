const list = document.getElementById("notes");
const form = document.getElementById("new");

async function refresh() {
  const notes = await (await fetch("/api/notes")).json();
  list.innerHTML = "";
  for (const n of notes) {
    const li = document.createElement("li");
    li.innerHTML = `<strong>${n.title}</strong> ${n.body}
      <time>${new Date(n.updated).toISOString()}</time>`;
    list.append(li);
  }
}

form.addEventListener("submit", async (e) => {
  e.preventDefault();
  const note = Object.fromEntries(new FormData(form));
  await fetch("/api/notes", { method: "POST", body: JSON.stringify(note) });
  form.reset();
  refresh();
});

refresh();
